// Test helper: one runtime build loaded RTLD_LOCAL by path, its C ABI resolved by name.
// The tests drive the builds only through these entries.
#pragma once

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "simpler/abi/runtime_abi.h"

namespace simpler::test {

struct RuntimeAbi {
  decltype(&::simpler_runtime_abi_version) abi_version;
  decltype(&::simpler_runtime_name) name;
  decltype(&::create_device_context) create;
  decltype(&::destroy_device_context) destroy;
  decltype(&::simpler_init_device) init_device;
  decltype(&::simpler_register_callable) register_callable;
  decltype(&::simpler_unregister_callable) unregister_callable;
  decltype(&::simpler_prepare_run) prepare_run;
  decltype(&::simpler_launch_run) launch_run;
  decltype(&::simpler_poll_run) poll_run;
  decltype(&::simpler_wait_run) wait_run;
  decltype(&::simpler_finalize_run) finalize_run;
  decltype(&::simpler_run) run;
  decltype(&::simpler_device_malloc) malloc;
  decltype(&::simpler_device_free) free;
  decltype(&::simpler_copy_to_device) copy_to;
  decltype(&::simpler_copy_from_device) copy_from;
  decltype(&::simpler_device_memory_info) memory_info;
  decltype(&::simpler_kernel_mode_supported) kernel_supported;
  decltype(&::simpler_kernel_mode_init) kernel_init;
  decltype(&::simpler_kernel_mode_prepare_callable) kernel_prepare;
  decltype(&::simpler_kernel_mode_launch) kernel_launch;
  decltype(&::simpler_committed_device_memory) committed;
  decltype(&::finalize_device) finalize;
  decltype(&::simpler_last_error) last_error;
};

class RuntimeLibrary {
 public:
  explicit RuntimeLibrary(const std::string& path) : path_(path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error("dlopen " + path + ": " + dlerror());
    resolve(abi_.abi_version, "simpler_runtime_abi_version");
    resolve(abi_.name, "simpler_runtime_name");
    resolve(abi_.create, "create_device_context");
    resolve(abi_.destroy, "destroy_device_context");
    resolve(abi_.init_device, "simpler_init_device");
    resolve(abi_.register_callable, "simpler_register_callable");
    resolve(abi_.unregister_callable, "simpler_unregister_callable");
    resolve(abi_.prepare_run, "simpler_prepare_run");
    resolve(abi_.launch_run, "simpler_launch_run");
    resolve(abi_.poll_run, "simpler_poll_run");
    resolve(abi_.wait_run, "simpler_wait_run");
    resolve(abi_.finalize_run, "simpler_finalize_run");
    resolve(abi_.run, "simpler_run");
    resolve(abi_.malloc, "simpler_device_malloc");
    resolve(abi_.free, "simpler_device_free");
    resolve(abi_.copy_to, "simpler_copy_to_device");
    resolve(abi_.copy_from, "simpler_copy_from_device");
    resolve(abi_.memory_info, "simpler_device_memory_info");
    resolve(abi_.kernel_supported, "simpler_kernel_mode_supported");
    resolve(abi_.kernel_init, "simpler_kernel_mode_init");
    resolve(abi_.kernel_prepare, "simpler_kernel_mode_prepare_callable");
    resolve(abi_.kernel_launch, "simpler_kernel_mode_launch");
    resolve(abi_.committed, "simpler_committed_device_memory");
    resolve(abi_.finalize, "finalize_device");
    resolve(abi_.last_error, "simpler_last_error");
  }
  ~RuntimeLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  RuntimeLibrary(const RuntimeLibrary&) = delete;
  RuntimeLibrary& operator=(const RuntimeLibrary&) = delete;

  const RuntimeAbi& abi() const { return abi_; }
  const std::string& path() const { return path_; }

 private:
  template <typename Fn>
  void resolve(Fn& slot, const char* symbol) {
    void* p = dlsym(handle_, symbol);
    if (p == nullptr) throw std::runtime_error(path_ + " does not export " + symbol);
    slot = reinterpret_cast<Fn>(p);
  }

  std::string path_;
  void* handle_ = nullptr;
  RuntimeAbi abi_{};
};

// The two builds, loaded once for the whole test binary (both at the same time, as a
// process that uses both would).
const RuntimeLibrary& tmr_library();
const RuntimeLibrary& hbg_library();

}  // namespace simpler::test
