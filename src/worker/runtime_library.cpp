// dlopen of a runtime build and its C ABI v2 table.
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

// Asks the build for this host's version; returns its table or throws (the caller unloads).
const SimplerApi* negotiate(void* handle, const std::string& path) {
  dlerror();
  auto get_api = reinterpret_cast<SimplerGetApiFn>(dlsym(handle, SIMPLER_GET_API_SYMBOL));
  if (get_api == nullptr) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_UNSUPPORTED,
                          "runtime build '" + path +
                              "' does not export " SIMPLER_GET_API_SYMBOL
                              ": it is not a simpler runtime build of C ABI 2 (a C ABI 1 build "
                              "exports loose entries instead); rebuild it with scripts/build.sh");
  }
  const SimplerApi* api = nullptr;
  const char* message = nullptr;
  // The oldest minor this host works with: entries of later minors (2.1 abandon_context)
  // are optional, used only when the table's struct_size covers them.
  constexpr uint32_t kMinimumMinor = 0;
  const int st = get_api(SIMPLER_API_MAJOR, kMinimumMinor, &api, &message);
  if (st != SIMPLER_OK || api == nullptr) {
    throw ChipWorkerError(st != SIMPLER_OK ? st : PTO_RUNTIME_ERR_INTERNAL,
                          "runtime build '" + path + "' refused C ABI " +
                              std::to_string(SIMPLER_API_MAJOR) + "." +
                              std::to_string(kMinimumMinor) + ": " +
                              (message != nullptr && *message ? message : "no table returned"));
  }
  if (api->major != SIMPLER_API_MAJOR || api->struct_size < SIMPLER_API_STRUCT_SIZE_2_0) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_UNSUPPORTED,
                          "runtime build '" + path + "' returned a C ABI table of version " +
                              std::to_string(api->major) + "." + std::to_string(api->minor) + " (" +
                              std::to_string(api->struct_size) + " bytes); this host needs " +
                              std::to_string(SIMPLER_API_MAJOR) + "." +
                              std::to_string(kMinimumMinor) + "; rebuild the runtime build");
  }
  return api;
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
  try {
    const SimplerApi* api = negotiate(h, bins.host_lib_path);
    return std::shared_ptr<RuntimeLibrary>(new RuntimeLibrary(h, bins.host_lib_path, api));
  } catch (...) {
    dlclose(h);
    throw;
  }
}

RuntimeLibrary::~RuntimeLibrary() {
  if (handle_ && !keep_loaded_) dlclose(handle_);
}

void RuntimeLibrary::require(const void* entry, const char* name) const {
  if (entry == nullptr) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INTERNAL,
                          "runtime build '" + path_ + "' leaves the required C ABI entry '" + name +
                              "' of its SimplerApi table NULL; rebuild it");
  }
}

#define SIMPLER_REQUIRE_ENTRY(field) require(reinterpret_cast<const void*>(api_->field), #field)

void RuntimeLibrary::require_context_entries() const {
  SIMPLER_REQUIRE_ENTRY(context_create);
  SIMPLER_REQUIRE_ENTRY(context_destroy);
  SIMPLER_REQUIRE_ENTRY(committed_device_memory);
  SIMPLER_REQUIRE_ENTRY(finalize_device);
}

void RuntimeLibrary::require_program_entries() const {
  SIMPLER_REQUIRE_ENTRY(init_device);
  SIMPLER_REQUIRE_ENTRY(register_callable);
  SIMPLER_REQUIRE_ENTRY(unregister_callable);
  SIMPLER_REQUIRE_ENTRY(prepare_run);
  SIMPLER_REQUIRE_ENTRY(launch_run);
  SIMPLER_REQUIRE_ENTRY(poll_run);
  SIMPLER_REQUIRE_ENTRY(wait_run);
  SIMPLER_REQUIRE_ENTRY(finalize_run);
  SIMPLER_REQUIRE_ENTRY(run);
  SIMPLER_REQUIRE_ENTRY(device_malloc);
  SIMPLER_REQUIRE_ENTRY(device_free);
  SIMPLER_REQUIRE_ENTRY(copy_to_device);
  SIMPLER_REQUIRE_ENTRY(copy_from_device);
  SIMPLER_REQUIRE_ENTRY(device_memory_info);
}

void RuntimeLibrary::require_kernel_supported() const {
  SIMPLER_REQUIRE_ENTRY(kernel_mode_supported);
}

void RuntimeLibrary::require_kernel_entries() const {
  SIMPLER_REQUIRE_ENTRY(kernel_mode_init);
  SIMPLER_REQUIRE_ENTRY(kernel_mode_prepare_callable);
  SIMPLER_REQUIRE_ENTRY(kernel_mode_launch);
}

#undef SIMPLER_REQUIRE_ENTRY

std::string RuntimeLibrary::last_error() const {
  if (api_->last_error == nullptr) return {};
  SimplerLastErrorArgs args{};
  args.struct_size = SIMPLER_LAST_ERROR_ARGS_STRUCT_SIZE;
  if (api_->last_error(&args) != SIMPLER_OK || args.message == nullptr) return {};
  return args.message;
}

}  // namespace simpler
