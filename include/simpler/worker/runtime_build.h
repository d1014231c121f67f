// simpler — locating the installed runtime build for (platform, runtime).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace simpler {

// The files of one runtime build. Optional images are empty when the build has none.
struct RuntimeBins {
  std::string platform;
  std::string runtime;
  std::string host_lib_path;     // the runtime build's C ABI library (dlopen RTLD_LOCAL)
  std::string sim_context_path;  // libsimpler_sim (dlopen RTLD_GLOBAL, once per process)
  std::string aicpu_image_path;  // optional executor images (kernel mode init)
  std::string aicore_image_path;
};

// A build that should exist is missing on disk. what() names the path looked for.
class RuntimeBuildNotFound : public std::runtime_error {
 public:
  RuntimeBuildNotFound(const std::string& message, std::string path)
      : std::runtime_error(message), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const std::vector<std::string>& known_platforms();  // {"a2a3sim", "a2a3"}
const std::vector<std::string>&
known_runtimes();  // {"tensormap_and_ringbuffer", "host_build_graph"}
// Directory holding libsimpler_sim.so and runtimes/: $SIMPLER_LIB_DIR if set, else the
// build's lib directory. A relative $SIMPLER_LIB_DIR is made absolute once, against the
// working directory of the first read of that value (a later chdir does not move it).
std::string default_lib_dir();
// `dir` made absolute against the current working directory ("" stays "").
std::string absolute_lib_dir(const std::string& dir);
// Unknown platform/runtime -> std::invalid_argument listing the valid ones; "a2a3"
// (hardware) -> std::invalid_argument saying this build has only the simulator and needs
// a CANN build for hardware; a missing file -> RuntimeBuildNotFound naming the path.
RuntimeBins find_runtime_build(std::string_view platform, std::string_view runtime,
                               std::string_view lib_dir = {});

}  // namespace simpler
