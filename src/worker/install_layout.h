// Where this copy of simpler lives, found at run time from the loaded libsimpler_worker.so
// (no build-time absolute paths: a build tree or an installed package can be moved).
//
// Layout, the same in a build tree and in an installed package:
//   <root>/lib/libsimpler_worker.so, <root>/lib/libsimpler_sim.so,
//   <root>/lib/runtimes/<platform>/<runtime>/libhost_runtime.so, <root>/include/simpler/...
// (build tree: <root> = build/, include/ mirrored by the build; package: <root> = simpler/)
#pragma once

#include <filesystem>

namespace simpler::layout {

// The directory holding the loaded libsimpler_worker.so (absolute).
std::filesystem::path worker_library_dir();

}  // namespace simpler::layout
