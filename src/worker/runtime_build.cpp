// simpler — locating the installed runtime build for (platform, runtime).
//
// Layout written by src/runtimes/CMakeLists.txt and src/sim/CMakeLists.txt:
//   <lib_dir>/libsimpler_sim.so
//   <lib_dir>/runtimes/<platform>/<runtime>/libhost_runtime.so
// The simulator builds carry their AICPU/AICore executors inside libhost_runtime.so, so
// the optional executor image paths stay empty.
#include "simpler/worker/runtime_build.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>

#include "install_layout.h"

namespace simpler {
namespace {

constexpr std::string_view kSimPlatform = "a2a3sim";
constexpr std::string_view kHardwarePlatform = "a2a3";
constexpr const char* kSimContextFile = "libsimpler_sim.so";
constexpr const char* kHostRuntimeFile = "libhost_runtime.so";

std::string join_quoted(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += "'" + n + "'";
  }
  return out;
}

bool contains(const std::vector<std::string>& names, std::string_view name) {
  for (const std::string& n : names)
    if (n == name) return true;
  return false;
}

// A regular file (or a symlink to one) must exist at `path`.
void require_file(const std::filesystem::path& path, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return;
  throw RuntimeBuildNotFound(
      "runtime build not found: " + std::string(what) + " '" + path.string() +
          "' does not exist. Build simpler (scripts/build.sh) or point SIMPLER_LIB_DIR at "
          "the lib/ directory of a build.",
      path.string());
}

}  // namespace

const std::vector<std::string>& known_platforms() {
  static const std::vector<std::string> platforms{std::string(kSimPlatform),
                                                  std::string(kHardwarePlatform)};
  return platforms;
}

const std::vector<std::string>& known_runtimes() {
  static const std::vector<std::string> runtimes{"tensormap_and_ringbuffer", "host_build_graph"};
  return runtimes;
}

std::string default_lib_dir() {
  const char* env = std::getenv("SIMPLER_LIB_DIR");
  // Unset: the directory of libsimpler_worker.so, the lib/ directory of its build or
  // package (found at run time: a moved build or package keeps working).
  if (env == nullptr || env[0] == '\0') return layout::worker_library_dir().string();
  // A relative value is resolved once, against the working directory of the first read of
  // that value, so a later chdir (before init, say) cannot move it.
  static std::mutex mu;
  static auto* resolved = new std::map<std::string, std::string>();  // process lifetime
  std::lock_guard lock(mu);
  auto [it, inserted] = resolved->try_emplace(env);
  if (inserted) it->second = absolute_lib_dir(env);
  return it->second;
}

std::string absolute_lib_dir(const std::string& dir) {
  if (dir.empty()) return dir;
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(dir, ec);
  return ec ? dir : absolute.lexically_normal().string();
}

RuntimeBins find_runtime_build(std::string_view platform, std::string_view runtime,
                               std::string_view lib_dir) {
  if (!contains(known_platforms(), platform)) {
    throw std::invalid_argument("unknown platform '" + std::string(platform) +
                                "'; valid platforms: " + join_quoted(known_platforms()));
  }
  if (platform == kHardwarePlatform) {
    throw std::invalid_argument(
        "platform 'a2a3' is real Ascend hardware, but this build of simpler has only the "
        "simulator ('a2a3sim'); running on hardware needs a CANN build of simpler. Use "
        "platform='a2a3sim' to run on the simulated chip.");
  }
  if (!contains(known_runtimes(), runtime)) {
    throw std::invalid_argument("unknown runtime '" + std::string(runtime) +
                                "'; valid runtimes: " + join_quoted(known_runtimes()));
  }

  const std::filesystem::path dir(lib_dir.empty() ? default_lib_dir() : std::string(lib_dir));
  const std::filesystem::path host_lib =
      dir / "runtimes" / std::string(platform) / std::string(runtime) / kHostRuntimeFile;
  const std::filesystem::path sim_context = dir / kSimContextFile;
  require_file(host_lib, "host runtime library");
  require_file(sim_context, "sim context library");

  RuntimeBins bins;
  bins.platform = std::string(platform);
  bins.runtime = std::string(runtime);
  bins.host_lib_path = host_lib.string();
  bins.sim_context_path = sim_context.string();
  return bins;
}

}  // namespace simpler
