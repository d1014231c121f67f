// dlopen/dlsym of a runtime build.
#include "runtime_library.h"

#include <dlfcn.h>

#include <mutex>
#include <set>

#include "simpler/worker/errors.h"

namespace simpler {
namespace {

std::string dl_error_text() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

// The sim context is one per process: loaded RTLD_GLOBAL the first time a build names it
// and never unloaded (every build and the framework share its devices).
void load_sim_context_once(const std::string& path) {
  static std::mutex mu;
  static std::set<std::string>* loaded = new std::set<std::string>();  // process lifetime
  std::lock_guard lock(mu);
  if (loaded->count(path)) return;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INTERNAL,
                          "cannot load the sim context '" + path + "': " + dl_error_text() +
                              " (check bins.sim_context_path; build with scripts/build.sh)");
  }
  loaded->insert(path);
}

}  // namespace

std::shared_ptr<RuntimeLibrary> RuntimeLibrary::open(const RuntimeBins& bins) {
  if (bins.host_lib_path.empty()) {
    throw ChipWorkerError(
        PTO_RUNTIME_ERR_INVALID_ARGUMENT,
        "bins.host_lib_path is empty; locate the build with find_runtime_build()");
  }
  if (!bins.sim_context_path.empty()) load_sim_context_once(bins.sim_context_path);
  void* h = dlopen(bins.host_lib_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    throw ChipWorkerError(
        PTO_RUNTIME_ERR_INTERNAL,
        "cannot load runtime build '" + bins.host_lib_path + "': " + dl_error_text());
  }
  return std::shared_ptr<RuntimeLibrary>(new RuntimeLibrary(h, bins.host_lib_path));
}

RuntimeLibrary::~RuntimeLibrary() {
  if (handle_ && !keep_loaded_) dlclose(handle_);
}

void* RuntimeLibrary::symbol(const char* name) const {
  dlerror();
  void* p = dlsym(handle_, name);
  if (!p) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INTERNAL,
                          "runtime build '" + path_ + "' does not export the required entry '" +
                              name + "' (is it a simpler runtime build of ABI version " +
                              std::to_string(SIMPLER_RUNTIME_ABI_VERSION) + "?)");
  }
  return p;
}

template <class Fn>
static void assign(Fn& slot, void* p) {
  slot = reinterpret_cast<Fn>(p);
}

void RuntimeLibrary::resolve_context_entries() {
  RuntimeEntries e = entries_;
  assign(e.create_device_context, symbol("create_device_context"));
  assign(e.destroy_device_context, symbol("destroy_device_context"));
  assign(e.committed_device_memory, symbol("simpler_committed_device_memory"));
  assign(e.finalize_device, symbol("finalize_device"));
  assign(e.last_error, dlsym(handle_, "simpler_last_error"));  // optional
  entries_ = e;
}

void RuntimeLibrary::resolve_program_entries() {
  RuntimeEntries e = entries_;
  assign(e.init_device, symbol("simpler_init_device"));
  assign(e.register_callable, symbol("simpler_register_callable"));
  assign(e.unregister_callable, symbol("simpler_unregister_callable"));
  assign(e.prepare_run, symbol("simpler_prepare_run"));
  assign(e.launch_run, symbol("simpler_launch_run"));
  assign(e.poll_run, symbol("simpler_poll_run"));
  assign(e.wait_run, symbol("simpler_wait_run"));
  assign(e.finalize_run, symbol("simpler_finalize_run"));
  assign(e.run, symbol("simpler_run"));
  assign(e.device_malloc, symbol("simpler_device_malloc"));
  assign(e.device_free, symbol("simpler_device_free"));
  assign(e.copy_to_device, symbol("simpler_copy_to_device"));
  assign(e.copy_from_device, symbol("simpler_copy_from_device"));
  assign(e.device_memory_info, symbol("simpler_device_memory_info"));
  entries_ = e;
}

void RuntimeLibrary::resolve_kernel_supported() {
  assign(entries_.kernel_mode_supported, symbol("simpler_kernel_mode_supported"));
}

void RuntimeLibrary::resolve_kernel_entries() {
  RuntimeEntries e = entries_;
  assign(e.kernel_mode_init, symbol("simpler_kernel_mode_init"));
  assign(e.kernel_mode_prepare_callable, symbol("simpler_kernel_mode_prepare_callable"));
  assign(e.kernel_mode_launch, symbol("simpler_kernel_mode_launch"));
  entries_ = e;
}

}  // namespace simpler
