// A runtime build loaded with dlopen (RTLD_LOCAL) and its resolved C ABI entries.
#pragma once

#include <memory>
#include <string>

#include "simpler/abi/runtime_abi.h"
#include "simpler/worker/runtime_build.h"

namespace simpler {

// Function-pointer table of the C ABI (runtime_abi.h). Entries resolve in groups so that
// a build is asked only for what the chosen mode needs.
struct RuntimeEntries {
  using LastErrorFn = int (*)(SimplerDeviceContext*, const char**);
  // always
  decltype(&::create_device_context) create_device_context = nullptr;
  decltype(&::destroy_device_context) destroy_device_context = nullptr;
  decltype(&::simpler_committed_device_memory) committed_device_memory = nullptr;
  decltype(&::finalize_device) finalize_device = nullptr;
  LastErrorFn last_error = nullptr;  // optional: simpler_last_error
  // program mode
  decltype(&::simpler_init_device) init_device = nullptr;
  decltype(&::simpler_register_callable) register_callable = nullptr;
  decltype(&::simpler_unregister_callable) unregister_callable = nullptr;
  decltype(&::simpler_prepare_run) prepare_run = nullptr;
  decltype(&::simpler_launch_run) launch_run = nullptr;
  decltype(&::simpler_poll_run) poll_run = nullptr;
  decltype(&::simpler_wait_run) wait_run = nullptr;
  decltype(&::simpler_finalize_run) finalize_run = nullptr;
  decltype(&::simpler_run) run = nullptr;
  decltype(&::simpler_device_malloc) device_malloc = nullptr;
  decltype(&::simpler_device_free) device_free = nullptr;
  decltype(&::simpler_copy_to_device) copy_to_device = nullptr;
  decltype(&::simpler_copy_from_device) copy_from_device = nullptr;
  decltype(&::simpler_device_memory_info) device_memory_info = nullptr;
  // kernel mode
  decltype(&::simpler_kernel_mode_supported) kernel_mode_supported = nullptr;
  decltype(&::simpler_kernel_mode_init) kernel_mode_init = nullptr;
  decltype(&::simpler_kernel_mode_prepare_callable) kernel_mode_prepare_callable = nullptr;
  decltype(&::simpler_kernel_mode_launch) kernel_mode_launch = nullptr;
};

class RuntimeLibrary {
 public:
  // Loads bins.sim_context_path RTLD_GLOBAL (once per process, never unloaded) and then
  // bins.host_lib_path RTLD_LOCAL. Failure -> ChipWorkerError with the dlerror() text.
  static std::shared_ptr<RuntimeLibrary> open(const RuntimeBins& bins);
  ~RuntimeLibrary();
  RuntimeLibrary(const RuntimeLibrary&) = delete;
  RuntimeLibrary& operator=(const RuntimeLibrary&) = delete;

  // Each throws ChipWorkerError naming the first missing symbol; nothing partial is kept.
  void resolve_context_entries();
  void resolve_program_entries();
  void resolve_kernel_supported();
  void resolve_kernel_entries();

  const RuntimeEntries& entries() const noexcept { return entries_; }
  const std::string& path() const noexcept { return path_; }
  // Never dlclose: a context of this build was deliberately leaked.
  void keep_loaded() noexcept { keep_loaded_ = true; }

 private:
  RuntimeLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* symbol(const char* name) const;  // throws when missing

  void* handle_;
  std::string path_;
  bool keep_loaded_ = false;
  RuntimeEntries entries_;
};

}  // namespace simpler
