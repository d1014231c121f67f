// simpler — compiling kernel and orchestration sources into simulator images.
//
// A kernel / orchestration for the simulated chip is a shared object built from C++ with
// the system compiler (see docs/kernels.md). KernelCompiler runs that compiler with
// simpler's include/ on the include path (kernel/kernel_abi.h, orch/orchestration_api.h),
// in a private temp directory that is always removed, and returns the .so bytes, ready
// for CoreCallable::build / ChipCallable::build.
//
// Results are cached on disk by a SHA-256 of everything that determines the output
// (compiler identity, flags, core type, simpler's ABI headers, the source), and each entry
// records the content digest of every header the compile read (-MD): editing any
// included header, in simpler or in a user include dir, misses the cache. An entry also
// carries its image's digest, checked before the image is returned. Entries are written
// atomically (temp file + rename), mode 0600, in directories created 0700; a cache
// directory or entry that another user owns or could write is refused (KernelCacheError).
// A cache that cannot be written only costs a recompile next time. Every compile runs
// under a timeout that kills the compiler's whole process group.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "simpler/kernel/kernel_abi.h"
#include "simpler/task/task_interface.h"  // CoreType

namespace simpler {

// The compiler failed, could not be run, or produced an image without the required
// entry symbol. what() says which, and includes the compiler's diagnostics;
// compiler_stderr() is the compiler's full output (empty when it never ran).
class KernelCompileError : public std::runtime_error {
 public:
  KernelCompileError(const std::string& message, std::string compiler_stderr)
      : std::runtime_error(message), compiler_stderr_(std::move(compiler_stderr)) {}
  const std::string& compiler_stderr() const { return compiler_stderr_; }

 private:
  std::string compiler_stderr_;
};

// The cache directory or an entry could have been written by someone else (owned by
// another user, or group/world-writable): nothing from it is used. what() says what to do.
class KernelCacheError : public KernelCompileError {
 public:
  explicit KernelCacheError(const std::string& message) : KernelCompileError(message, "") {}
};

// Compile timeout when neither the option nor $SIMPLER_KERNEL_COMPILE_TIMEOUT sets one.
inline constexpr double kDefaultCompileTimeoutSeconds = 120.0;

struct KernelCompilerOptions {
  std::string compiler;                   // empty: the C++ compiler that built simpler
  std::vector<std::string> include_dirs;  // searched after simpler's include/
  std::string cache_dir;                 // empty: $SIMPLER_CACHE_DIR, else ~/.cache/simpler/kernels
  std::vector<std::string> extra_flags;  // appended after the fixed flags
  bool use_cache = true;                 // false: always compile, never touch the cache
  // Seconds one compiler run may take before its process group is killed
  // (KernelCompileError "timed out"). 0: $SIMPLER_KERNEL_COMPILE_TIMEOUT, else
  // kDefaultCompileTimeoutSeconds. Negative: std::invalid_argument.
  double timeout_seconds = 0;
};

struct KernelCompilerStats {
  uint64_t compiler_runs = 0;         // times the compiler was invoked
  uint64_t cache_hits = 0;            // results served from the cache
  uint64_t cache_write_failures = 0;  // results that could not be stored
};

// Fixed flags of every image: -std=c++17 -O2 -fPIC -shared -Wl,--no-undefined; kernels
// add -DSIMPLER_KERNEL_AIC or -DSIMPLER_KERNEL_AIV (SIMPLER_CORE_AIC/AIV are the
// SimplerCoreType enumerators of kernel_abi.h, so they cannot double as macros).
// Thread-safe: concurrent compiles use separate temp directories.
class KernelCompiler {
 public:
  // Throws std::invalid_argument if no cache directory can be determined (use_cache and
  // neither cache_dir, $SIMPLER_CACHE_DIR nor $HOME is set) or the timeout is invalid.
  explicit KernelCompiler(KernelCompilerOptions options = {});

  // The image must export extern "C" void kernel_entry(int64_t* args); otherwise
  // KernelCompileError says so.
  std::vector<uint8_t> compile_kernel(std::string_view source, CoreType core) const;
  // When `entry` is not empty the image must export it (the ChipCallable's func_name).
  std::vector<uint8_t> compile_orchestration(std::string_view source,
                                             std::string_view entry = {}) const;

  const std::string& compiler() const { return options_.compiler; }
  const std::string& cache_dir() const { return options_.cache_dir; }
  bool use_cache() const { return options_.use_cache; }
  double timeout_seconds() const { return options_.timeout_seconds; }  // resolved
  KernelCompilerStats stats() const;

 private:
  enum class ImageKind { Kernel, Orchestration };
  std::vector<uint8_t> compile(std::string_view source, ImageKind kind,
                               std::optional<CoreType> core,
                               std::string_view required_symbol) const;
  std::vector<std::string> flags_for(ImageKind kind, std::optional<CoreType> core) const;

  KernelCompilerOptions options_;
  std::string compiler_identity_;  // path + size + mtime: a changed compiler misses the cache
  std::string headers_digest_;     // SHA-256 of simpler's ABI headers
  mutable std::atomic<uint64_t> compiler_runs_{0};
  mutable std::atomic<uint64_t> cache_hits_{0};
  mutable std::atomic<uint64_t> cache_write_failures_{0};
};

// Defaults baked in at build time (overridable per KernelCompiler through the options).
std::string default_kernel_compiler();  // the compiler that built simpler
std::string kernel_include_dir();       // simpler's include/ directory
// $SIMPLER_CACHE_DIR, else $HOME/.cache/simpler/kernels; empty when neither is set.
std::string default_kernel_cache_dir();

}  // namespace simpler
