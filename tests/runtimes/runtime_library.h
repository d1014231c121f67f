// Test helper: one runtime build loaded RTLD_LOCAL by path, its C ABI v2 table fetched
// through simpler_get_api (the one exported symbol). The tests drive the builds only
// through that table; RuntimeAbi adds positional C++ calls over it so the tests read
// short (each fills the args struct with this header's struct_size).
#pragma once

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "simpler/abi/runtime_abi.h"

namespace simpler::test {

class RuntimeAbi {
 public:
  explicit RuntimeAbi(const SimplerApi* api = nullptr) : api_(api) {}
  const SimplerApi& table() const { return *api_; }

  int name(const char** out) const {
    SimplerRuntimeNameArgs a{.struct_size = sizeof a};
    const int st = api_->runtime_name(&a);
    if (out != nullptr) *out = a.name;
    return st;
  }
  int create(SimplerDeviceContext** out) const {
    SimplerContextCreateArgs a{.struct_size = sizeof a};
    const int st = api_->context_create(&a);
    if (out != nullptr) *out = a.ctx;
    return st;
  }
  int destroy(SimplerDeviceContext* ctx) const {
    SimplerContextDestroyArgs a{.struct_size = sizeof a, .ctx = ctx};
    return api_->context_destroy(&a);
  }
  int init_device(SimplerDeviceContext* ctx, int32_t device, const SimplerCallConfig* c) const {
    SimplerInitDeviceArgs a{.struct_size = sizeof a, .ctx = ctx, .device_id = device, .prewarm = c};
    return api_->init_device(&a);
  }
  int register_callable(SimplerDeviceContext* ctx, const void* image, size_t size,
                        int64_t* id) const {
    SimplerRegisterCallableArgs a{
        .struct_size = sizeof a, .ctx = ctx, .image = image, .size = size};
    const int st = api_->register_callable(&a);
    if (id != nullptr) *id = a.callable_id;
    return st;
  }
  int unregister_callable(SimplerDeviceContext* ctx, int64_t id) const {
    SimplerUnregisterCallableArgs a{.struct_size = sizeof a, .ctx = ctx, .callable_id = id};
    return api_->unregister_callable(&a);
  }
  int prepare_run(SimplerDeviceContext* ctx, int64_t id, const ChipStorageTaskArgs* args,
                  const SimplerCallConfig* config, uint64_t* run) const {
    SimplerPrepareRunArgs a{
        .struct_size = sizeof a, .ctx = ctx, .callable_id = id, .args = args, .config = config};
    const int st = api_->prepare_run(&a);
    if (run != nullptr) *run = a.run_id;
    return st;
  }
  int launch_run(SimplerDeviceContext* ctx, uint64_t run) const {
    SimplerLaunchRunArgs a{.struct_size = sizeof a, .ctx = ctx, .run_id = run};
    return api_->launch_run(&a);
  }
  int poll_run(SimplerDeviceContext* ctx, uint64_t run, int32_t* done) const {
    SimplerPollRunArgs a{.struct_size = sizeof a, .ctx = ctx, .run_id = run};
    const int st = api_->poll_run(&a);
    if (done != nullptr) *done = a.done ? 1 : 0;
    return st;
  }
  int wait_run(SimplerDeviceContext* ctx, uint64_t run, int64_t timeout_us) const {
    SimplerWaitRunArgs a{
        .struct_size = sizeof a, .ctx = ctx, .run_id = run, .timeout_us = timeout_us};
    return api_->wait_run(&a);
  }
  int finalize_run(SimplerDeviceContext* ctx, uint64_t run) const {
    SimplerFinalizeRunArgs a{.struct_size = sizeof a, .ctx = ctx, .run_id = run};
    return api_->finalize_run(&a);
  }
  int run(SimplerDeviceContext* ctx, int64_t id, const ChipStorageTaskArgs* args,
          const SimplerCallConfig* config) const {
    SimplerRunArgs a{
        .struct_size = sizeof a, .ctx = ctx, .callable_id = id, .args = args, .config = config};
    return api_->run(&a);
  }
  int malloc(SimplerDeviceContext* ctx, size_t size, uint64_t* out) const {
    SimplerDeviceMallocArgs a{.struct_size = sizeof a, .ctx = ctx, .size = size};
    const int st = api_->device_malloc(&a);
    if (out != nullptr) *out = a.device_ptr;
    return st;
  }
  int free(SimplerDeviceContext* ctx, uint64_t ptr) const {
    SimplerDeviceFreeArgs a{.struct_size = sizeof a, .ctx = ctx, .device_ptr = ptr};
    return api_->device_free(&a);
  }
  int copy_to(SimplerDeviceContext* ctx, uint64_t dst, const void* src, size_t size) const {
    SimplerCopyToDeviceArgs a{
        .struct_size = sizeof a, .ctx = ctx, .dst_device = dst, .src_host = src, .size = size};
    return api_->copy_to_device(&a);
  }
  int copy_from(SimplerDeviceContext* ctx, void* dst, uint64_t src, size_t size) const {
    SimplerCopyFromDeviceArgs a{
        .struct_size = sizeof a, .ctx = ctx, .dst_host = dst, .src_device = src, .size = size};
    return api_->copy_from_device(&a);
  }
  int memory_info(SimplerDeviceContext* ctx, uint64_t* free_bytes, uint64_t* total) const {
    SimplerDeviceMemoryInfoArgs a{.struct_size = sizeof a, .ctx = ctx};
    const int st = api_->device_memory_info(&a);
    if (free_bytes != nullptr) *free_bytes = a.free_bytes;
    if (total != nullptr) *total = a.total_bytes;
    return st;
  }
  // 1 / 0 on success (like a bool), else the negative status.
  int kernel_supported(SimplerDeviceContext* ctx) const {
    SimplerKernelModeSupportedArgs a{.struct_size = sizeof a, .ctx = ctx};
    const int st = api_->kernel_mode_supported(&a);
    return st != SIMPLER_OK ? st : (a.supported ? 1 : 0);
  }
  int kernel_init(SimplerDeviceContext* ctx, int32_t device, const void* aicpu, size_t aicpu_size,
                  const void* aicore, size_t aicore_size, const SimplerCallConfig* config,
                  uint64_t generation) const {
    SimplerKernelModeInitArgs a{.struct_size = sizeof a,
                                .ctx = ctx,
                                .device_id = device,
                                .aicpu_image = aicpu,
                                .aicpu_size = aicpu_size,
                                .aicore_image = aicore,
                                .aicore_size = aicore_size,
                                .config = config,
                                .generation = generation};
    return api_->kernel_mode_init(&a);
  }
  int kernel_prepare(SimplerDeviceContext* ctx, const void* image, size_t size, int64_t* id) const {
    SimplerKernelModePrepareCallableArgs a{
        .struct_size = sizeof a, .ctx = ctx, .image = image, .size = size};
    const int st = api_->kernel_mode_prepare_callable(&a);
    if (id != nullptr) *id = a.callable_id;
    return st;
  }
  int kernel_launch(SimplerDeviceContext* ctx, int64_t id, const ChipStorageTaskArgs* args,
                    void* stream) const {
    SimplerKernelModeLaunchArgs a{
        .struct_size = sizeof a, .ctx = ctx, .callable_id = id, .args = args, .stream = stream};
    return api_->kernel_mode_launch(&a);
  }
  int committed(SimplerDeviceContext* ctx, uint64_t* out) const {
    SimplerCommittedDeviceMemoryArgs a{.struct_size = sizeof a, .ctx = ctx};
    const int st = api_->committed_device_memory(&a);
    if (out != nullptr) *out = a.bytes;
    return st;
  }
  int finalize(SimplerDeviceContext* ctx) const {
    SimplerFinalizeDeviceArgs a{.struct_size = sizeof a, .ctx = ctx};
    return api_->finalize_device(&a);
  }
  int abandon(SimplerDeviceContext* ctx) const {
    SimplerAbandonContextArgs a{.struct_size = sizeof a, .ctx = ctx};
    return api_->abandon_context(&a);
  }

 private:
  const SimplerApi* api_;
};

class RuntimeLibrary {
 public:
  explicit RuntimeLibrary(const std::string& path) : path_(path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error("dlopen " + path + ": " + dlerror());
    get_api_ = reinterpret_cast<SimplerGetApiFn>(dlsym(handle_, SIMPLER_GET_API_SYMBOL));
    if (get_api_ == nullptr) throw std::runtime_error(path_ + " does not export simpler_get_api");
    const SimplerApi* api = nullptr;
    if (get_api_(SIMPLER_API_MAJOR, SIMPLER_API_MINOR, &api, nullptr) != SIMPLER_OK) {
      throw std::runtime_error(path_ + " refused C ABI " + std::to_string(SIMPLER_API_MAJOR));
    }
    abi_ = RuntimeAbi(api);
  }
  ~RuntimeLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  RuntimeLibrary(const RuntimeLibrary&) = delete;
  RuntimeLibrary& operator=(const RuntimeLibrary&) = delete;

  const RuntimeAbi& abi() const { return abi_; }
  SimplerGetApiFn get_api() const { return get_api_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
  SimplerGetApiFn get_api_ = nullptr;
  RuntimeAbi abi_;
};

// The two builds, loaded once for the whole test binary (both at the same time, as a
// process that uses both would).
const RuntimeLibrary& tmr_library();
const RuntimeLibrary& hbg_library();

}  // namespace simpler::test
