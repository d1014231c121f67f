// A fake runtime build for ChipWorker/Worker tests: exports the C ABI v2 (runtime_abi.h,
// simpler_get_api and its table) with behaviours a test switches through
// fake_runtime_control(). Compiled in variants that leave one table entry NULL
// (FAKE_OMIT_SUPPORTED, FAKE_OMIT_KERNEL_LAUNCH), that speak another major version
// (FAKE_API_MAJOR), and with a default kernel-mode answer (FAKE_DEFAULT_SUPPORTED).
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "fake_runtime_control.h"
#include "simpler/abi/runtime_abi.h"

#ifndef FAKE_DEFAULT_SUPPORTED
#define FAKE_DEFAULT_SUPPORTED 1
#endif
#ifndef FAKE_API_MAJOR
#define FAKE_API_MAJOR SIMPLER_API_MAJOR
#endif
#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

struct SimplerDeviceContext {
  int mode = 0;  // 0 none, 1 program, 2 kernel
  bool holds_resources = false;
  int64_t next_callable = 0;
  uint64_t next_run = 1;
  std::set<int64_t> callables;
  std::set<uint64_t> runs;
  std::map<uint64_t, size_t> allocations;
  uint64_t static_bytes = 0;
};

namespace {
std::mutex g_mu;
std::condition_variable g_cv;
FakeRuntimeControl g_control;

void reset_locked() {
  std::memset(&g_control, 0, sizeof g_control);
  g_control.supported = FAKE_DEFAULT_SUPPORTED;
  g_control.finalize_failure_status = PTO_RUNTIME_ERR_INTERNAL;
}
struct Init {
  Init() { reset_locked(); }
} g_init;

uint64_t committed(const SimplerDeviceContext* ctx) {
  uint64_t bytes = ctx->static_bytes;
  for (auto& [p, n] : ctx->allocations) bytes += n;
  return bytes;
}
}  // namespace

FAKE_EXPORT FakeRuntimeControl* fake_runtime_control(void) { return &g_control; }
FAKE_EXPORT void fake_runtime_reset(void) {
  std::lock_guard l(g_mu);
  reset_locked();
  g_cv.notify_all();
}
FAKE_EXPORT void fake_runtime_set(const char* field, int value) {
  std::lock_guard l(g_mu);
  if (!std::strcmp(field, "runs_blocked")) g_control.runs_blocked = value;
  if (!std::strcmp(field, "launches_blocked")) g_control.launches_blocked = value;
  g_cv.notify_all();
}

// Waits (bounded) until a kernel launch is blocked inside the runtime; returns 1 if so.
FAKE_EXPORT int fake_runtime_wait_launch_in_progress(int timeout_ms) {
  std::unique_lock l(g_mu);
  return g_cv.wait_for(l, std::chrono::milliseconds(timeout_ms),
                       [] { return g_control.launches_in_progress > 0; })
             ? 1
             : 0;
}

namespace {

int runtime_name(SimplerRuntimeNameArgs* a) {
  a->name = "fake";
  return 0;
}

// The fake's own per-thread last error: what the runtime says about a failure, so tests
// can check it reaches the ChipWorkerError message.
thread_local const char* t_last_error = "";
int fail(int status, const char* message) {
  t_last_error = message;
  return status;
}
int last_error(SimplerLastErrorArgs* a) {
  a->status = 0;
  a->message = t_last_error;
  return 0;
}
// Every other entry clears it first, as the real builds do.
void clear() { t_last_error = ""; }

int context_create(SimplerContextCreateArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  a->ctx = new SimplerDeviceContext();
  ++g_control.contexts_created;
  return 0;
}
int context_destroy(SimplerContextDestroyArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  SimplerDeviceContext* ctx = a->ctx;
  if (ctx->holds_resources)
    return fail(PTO_RUNTIME_ERR_INVALID_STATE, "fake: still holds resources");
  for (auto& [p, n] : ctx->allocations) std::free(reinterpret_cast<void*>(p));
  delete ctx;
  ++g_control.contexts_destroyed;
  return 0;
}

// ---- program mode ----
int init_device(SimplerInitDeviceArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  ++g_control.init_device_calls;
  if (a->ctx->mode != 0) return fail(PTO_RUNTIME_ERR_INVALID_STATE, "fake: latched");
  a->ctx->mode = 1;
  a->ctx->holds_resources = true;  // the device claim
  if (g_control.init_device_status != 0) {
    return fail(g_control.init_device_status, "fake runtime detail: init_device refused");
  }
  return 0;
}
int register_callable(SimplerRegisterCallableArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  a->callable_id = a->ctx->next_callable++;
  a->ctx->callables.insert(a->callable_id);
  return 0;
}
int unregister_callable(SimplerUnregisterCallableArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  return a->ctx->callables.erase(a->callable_id)
             ? 0
             : fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "fake: unknown callable");
}
int prepare_run(SimplerPrepareRunArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  if (!a->ctx->callables.count(a->callable_id))
    return fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "fake: unknown callable");
  a->run_id = a->ctx->next_run++;
  a->ctx->runs.insert(a->run_id);
  return 0;
}
int launch_run(SimplerLaunchRunArgs*) {
  clear();
  std::lock_guard l(g_mu);
  ++g_control.runs_started;
  return 0;
}
int poll_run(SimplerPollRunArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  a->done = g_control.runs_blocked == 0;
  return 0;
}
int wait_run(SimplerWaitRunArgs* a) {
  clear();
  std::unique_lock l(g_mu);
  auto unblocked = [] { return g_control.runs_blocked == 0; };
  if (a->timeout_us < 0) {
    g_cv.wait(l, unblocked);
  } else if (!g_cv.wait_for(l, std::chrono::microseconds(a->timeout_us), unblocked)) {
    return fail(PTO_RUNTIME_ERR_TIMEOUT, "fake: timeout");
  }
  return g_control.run_status != 0 ? fail(g_control.run_status, "fake runtime detail: run failed")
                                   : 0;
}
int finalize_run(SimplerFinalizeRunArgs* a) {
  clear();
  std::unique_lock l(g_mu);
  g_cv.wait(l, [] { return g_control.runs_blocked == 0; });
  if (!a->ctx->runs.erase(a->run_id)) return fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "fake: run");
  ++g_control.runs_finalized;
  return g_control.run_status != 0 ? fail(g_control.run_status, "fake runtime detail: run failed")
                                   : 0;
}
int run(SimplerRunArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  if (!a->ctx->callables.count(a->callable_id))
    return fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "fake: unknown callable");
  ++g_control.runs_started;
  return g_control.run_status != 0 ? fail(g_control.run_status, "fake runtime detail: run failed")
                                   : 0;
}
int device_malloc(SimplerDeviceMallocArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  void* p = std::calloc(1, a->size);
  a->device_ptr = reinterpret_cast<uint64_t>(p);
  a->ctx->allocations[a->device_ptr] = a->size;
  return 0;
}
int device_free(SimplerDeviceFreeArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  if (!a->ctx->allocations.erase(a->device_ptr))
    return fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "fake: not an allocation");
  std::free(reinterpret_cast<void*>(a->device_ptr));
  return 0;
}
int copy_to_device(SimplerCopyToDeviceArgs* a) {
  clear();
  std::memcpy(reinterpret_cast<void*>(a->dst_device), a->src_host, a->size);
  return 0;
}
int copy_from_device(SimplerCopyFromDeviceArgs* a) {
  clear();
  std::memcpy(a->dst_host, reinterpret_cast<const void*>(a->src_device), a->size);
  return 0;
}
int device_memory_info(SimplerDeviceMemoryInfoArgs* a) {
  clear();
  a->free_bytes = 1u << 20;
  a->total_bytes = 1u << 21;
  return 0;
}

// ---- kernel mode ----
int kernel_mode_supported(SimplerKernelModeSupportedArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  ++g_control.supported_calls;
  a->supported = g_control.supported != 0;
  return 0;
}
int kernel_mode_init(SimplerKernelModeInitArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  ++g_control.kernel_init_calls;
  g_control.last_generation = a->generation;
  if (g_control.kernel_init_status == PTO_RUNTIME_ERR_INVALID_ARGUMENT ||
      g_control.kernel_init_status == PTO_RUNTIME_ERR_UNSUPPORTED) {
    return fail(g_control.kernel_init_status, "fake: refused");  // before taking anything
  }
  a->ctx->mode = 2;
  a->ctx->holds_resources = true;
  a->ctx->static_bytes = 4096;
  return g_control.kernel_init_status != 0 ? fail(g_control.kernel_init_status, "fake: init failed")
                                           : 0;
}
int kernel_mode_prepare_callable(SimplerKernelModePrepareCallableArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  ++g_control.prepare_calls;
  if (a->ctx->mode != 2) return fail(PTO_RUNTIME_ERR_INVALID_STATE, "fake: not kernel mode");
  if (g_control.prepare_status != 0) {
    a->callable_id = -1;
    return fail(g_control.prepare_status, "fake: prepare failed");
  }
  if (g_control.prepare_id_mode == 1) return 0;
  a->callable_id = g_control.prepare_id_mode == 2 ? -5 : a->ctx->next_callable++;
  return 0;
}
int kernel_mode_launch(SimplerKernelModeLaunchArgs* a) {
  clear();
  std::unique_lock l(g_mu);
  ++g_control.launch_calls;
  ++g_control.launches_in_progress;
  g_cv.notify_all();
  // Bounded: a test that never unblocks (or cannot, say a caller holding the GIL) fails
  // on its own assertions after 30 s instead of hanging.
  g_cv.wait_for(l, std::chrono::seconds(30), [] { return g_control.launches_blocked == 0; });
  --g_control.launches_in_progress;
  g_control.last_launch_stream = a->stream;
  if (a->ctx->mode != 2) return fail(PTO_RUNTIME_ERR_INVALID_STATE, "fake: not kernel mode");
  return g_control.launch_status != 0 ? fail(g_control.launch_status, "fake: launch failed") : 0;
}
int kernel_mode_launch_error(SimplerKernelModeLaunchErrorArgs* a) {
  clear();
  a->message = "";
  return 0;
}

// ---- both ----
int committed_device_memory(SimplerCommittedDeviceMemoryArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  a->bytes = committed(a->ctx);
  return 0;
}
int finalize_device(SimplerFinalizeDeviceArgs* a) {
  clear();
  std::lock_guard l(g_mu);
  ++g_control.finalize_calls;
  if (g_control.finalize_failures > 0) {
    --g_control.finalize_failures;
    return fail(g_control.finalize_failure_status, "fake runtime detail: finalize failed");
  }
  SimplerDeviceContext* ctx = a->ctx;
  for (auto& [p, n] : ctx->allocations) std::free(reinterpret_cast<void*>(p));
  ctx->allocations.clear();
  ctx->static_bytes = 0;
  ctx->holds_resources = false;
  ctx->mode = ctx->mode == 0 ? 0 : -1;  // closed: prepare/launch refused
  return 0;
}

SimplerApi make_api() {
  SimplerApi api{};
  api.struct_size = sizeof api;
  api.major = FAKE_API_MAJOR;
  api.minor = SIMPLER_API_MINOR;
  api.last_error = &last_error;
  api.runtime_name = &runtime_name;
  api.context_create = &context_create;
  api.context_destroy = &context_destroy;
  api.init_device = &init_device;
  api.register_callable = &register_callable;
  api.unregister_callable = &unregister_callable;
  api.prepare_run = &prepare_run;
  api.launch_run = &launch_run;
  api.poll_run = &poll_run;
  api.wait_run = &wait_run;
  api.finalize_run = &finalize_run;
  api.run = &run;
  api.device_malloc = &device_malloc;
  api.device_free = &device_free;
  api.copy_to_device = &copy_to_device;
  api.copy_from_device = &copy_from_device;
  api.device_memory_info = &device_memory_info;
  api.kernel_mode_supported = &kernel_mode_supported;
  api.kernel_mode_init = &kernel_mode_init;
  api.kernel_mode_prepare_callable = &kernel_mode_prepare_callable;
  api.kernel_mode_launch = &kernel_mode_launch;
  api.kernel_mode_launch_error = &kernel_mode_launch_error;
  api.committed_device_memory = &committed_device_memory;
  api.finalize_device = &finalize_device;
#ifdef FAKE_OMIT_SUPPORTED
  api.kernel_mode_supported = nullptr;
#endif
#ifdef FAKE_OMIT_KERNEL_LAUNCH
  api.kernel_mode_launch = nullptr;
#endif
  return api;
}
const SimplerApi g_api = make_api();

}  // namespace

// Like a real build, refuses a host of another major version; a FAKE_API_MAJOR variant
// hands out a table of its own (wrong) major, so the host's own check is tested too.
FAKE_EXPORT int simpler_get_api(uint32_t major, uint32_t, const SimplerApi** out,
                                const char** message) {
  if (message != nullptr) *message = "";
  if (major != SIMPLER_API_MAJOR) {
    *out = nullptr;
    if (message != nullptr) *message = "fake: speaks C ABI 2.x only";
    return PTO_RUNTIME_ERR_UNSUPPORTED;
  }
  *out = &g_api;
  return 0;
}
