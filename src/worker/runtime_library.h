// A runtime build loaded with dlopen (RTLD_LOCAL) and its C ABI v2 table.
#pragma once

#include <memory>
#include <string>

#include "simpler/abi/runtime_abi.h"
#include "simpler/worker/runtime_build.h"

namespace simpler {

class RuntimeLibrary {
 public:
  // Loads bins.sim_context_path RTLD_GLOBAL (once per process, never unloaded), then
  // bins.host_lib_path RTLD_LOCAL, resolves simpler_get_api (the one dlsym) and asks it
  // for this host's C ABI version. Failure (no such file, not a v2 build, a refused
  // version) -> ChipWorkerError saying what to do; nothing stays loaded.
  static std::shared_ptr<RuntimeLibrary> open(const RuntimeBins& bins);
  ~RuntimeLibrary();
  RuntimeLibrary(const RuntimeLibrary&) = delete;
  RuntimeLibrary& operator=(const RuntimeLibrary&) = delete;

  // Each throws ChipWorkerError naming the first table entry the build leaves NULL.
  void require_context_entries() const;
  void require_program_entries() const;
  void require_kernel_supported() const;
  void require_kernel_entries() const;

  const SimplerApi& api() const noexcept { return *api_; }
  const std::string& path() const noexcept { return path_; }
  // Never dlclose: a context of this build was deliberately leaked.
  void keep_loaded() noexcept { keep_loaded_ = true; }

  // The calling thread's last error message of this build ("" when none). Read right
  // after a failing call, on the same thread, before any other call into the build.
  std::string last_error() const;

 private:
  RuntimeLibrary(void* handle, std::string path, const SimplerApi* api)
      : handle_(handle), path_(std::move(path)), api_(api) {}
  void require(const void* entry, const char* name) const;

  void* handle_;
  std::string path_;
  const SimplerApi* api_;
  bool keep_loaded_ = false;
};

}  // namespace simpler
