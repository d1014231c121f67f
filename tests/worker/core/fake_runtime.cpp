// A fake runtime build for ChipWorker/Worker tests: exports the C ABI (runtime_abi.h)
// with behaviours a test switches through fake_runtime_control(). Compiled in variants
// that omit one entry (FAKE_OMIT_SUPPORTED, FAKE_OMIT_KERNEL_LAUNCH) and with a default
// kernel-mode answer (FAKE_DEFAULT_SUPPORTED).
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

FAKE_EXPORT int simpler_runtime_abi_version(uint32_t* v) {
  *v = SIMPLER_RUNTIME_ABI_VERSION;
  return 0;
}
FAKE_EXPORT int simpler_runtime_name(const char** n) {
  *n = "fake";
  return 0;
}

FAKE_EXPORT int create_device_context(SimplerDeviceContext** out) {
  std::lock_guard l(g_mu);
  *out = new SimplerDeviceContext();
  ++g_control.contexts_created;
  return 0;
}
FAKE_EXPORT int destroy_device_context(SimplerDeviceContext* ctx) {
  std::lock_guard l(g_mu);
  if (ctx->holds_resources) return PTO_RUNTIME_ERR_INVALID_STATE;
  for (auto& [p, n] : ctx->allocations) std::free(reinterpret_cast<void*>(p));
  delete ctx;
  ++g_control.contexts_destroyed;
  return 0;
}
FAKE_EXPORT int simpler_last_error(SimplerDeviceContext*, const char** msg) {
  *msg = "fake runtime detail";
  return 0;
}

// ---- program mode ----
FAKE_EXPORT int simpler_init_device(SimplerDeviceContext* ctx, int32_t, const SimplerCallConfig*) {
  std::lock_guard l(g_mu);
  ++g_control.init_device_calls;
  if (ctx->mode != 0) return PTO_RUNTIME_ERR_INVALID_STATE;
  ctx->mode = 1;
  ctx->holds_resources = true;  // the device claim
  return g_control.init_device_status;
}
FAKE_EXPORT int simpler_register_callable(SimplerDeviceContext* ctx, const void*, size_t,
                                          int64_t* id) {
  std::lock_guard l(g_mu);
  *id = ctx->next_callable++;
  ctx->callables.insert(*id);
  return 0;
}
FAKE_EXPORT int simpler_unregister_callable(SimplerDeviceContext* ctx, int64_t id) {
  std::lock_guard l(g_mu);
  return ctx->callables.erase(id) ? 0 : PTO_RUNTIME_ERR_INVALID_ARGUMENT;
}
FAKE_EXPORT int simpler_prepare_run(SimplerDeviceContext* ctx, int64_t id,
                                    const ChipStorageTaskArgs*, const SimplerCallConfig*,
                                    uint64_t* run) {
  std::lock_guard l(g_mu);
  if (!ctx->callables.count(id)) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  *run = ctx->next_run++;
  ctx->runs.insert(*run);
  return 0;
}
FAKE_EXPORT int simpler_launch_run(SimplerDeviceContext*, uint64_t) {
  std::lock_guard l(g_mu);
  ++g_control.runs_started;
  return 0;
}
FAKE_EXPORT int simpler_poll_run(SimplerDeviceContext*, uint64_t, int32_t* done) {
  std::lock_guard l(g_mu);
  *done = g_control.runs_blocked ? 0 : 1;
  return 0;
}
FAKE_EXPORT int simpler_wait_run(SimplerDeviceContext*, uint64_t, int64_t timeout_us) {
  std::unique_lock l(g_mu);
  auto unblocked = [] { return g_control.runs_blocked == 0; };
  if (timeout_us < 0) {
    g_cv.wait(l, unblocked);
  } else if (!g_cv.wait_for(l, std::chrono::microseconds(timeout_us), unblocked)) {
    return PTO_RUNTIME_ERR_TIMEOUT;
  }
  return g_control.run_status;
}
FAKE_EXPORT int simpler_finalize_run(SimplerDeviceContext* ctx, uint64_t run) {
  std::unique_lock l(g_mu);
  g_cv.wait(l, [] { return g_control.runs_blocked == 0; });
  if (!ctx->runs.erase(run)) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return g_control.run_status;
}
FAKE_EXPORT int simpler_run(SimplerDeviceContext* ctx, int64_t id, const ChipStorageTaskArgs*,
                            const SimplerCallConfig*) {
  std::lock_guard l(g_mu);
  if (!ctx->callables.count(id)) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  ++g_control.runs_started;
  return g_control.run_status;
}
FAKE_EXPORT int simpler_device_malloc(SimplerDeviceContext* ctx, size_t size, uint64_t* out) {
  std::lock_guard l(g_mu);
  void* p = std::calloc(1, size);
  *out = reinterpret_cast<uint64_t>(p);
  ctx->allocations[*out] = size;
  return 0;
}
FAKE_EXPORT int simpler_device_free(SimplerDeviceContext* ctx, uint64_t ptr) {
  std::lock_guard l(g_mu);
  if (!ctx->allocations.erase(ptr)) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  std::free(reinterpret_cast<void*>(ptr));
  return 0;
}
FAKE_EXPORT int simpler_copy_to_device(SimplerDeviceContext*, uint64_t dst, const void* src,
                                       size_t n) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return 0;
}
FAKE_EXPORT int simpler_copy_from_device(SimplerDeviceContext*, void* dst, uint64_t src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return 0;
}
FAKE_EXPORT int simpler_device_memory_info(SimplerDeviceContext*, uint64_t* f, uint64_t* t) {
  *f = 1u << 20;
  *t = 1u << 21;
  return 0;
}

// ---- kernel mode ----
#ifndef FAKE_OMIT_SUPPORTED
FAKE_EXPORT int simpler_kernel_mode_supported(SimplerDeviceContext*) {
  std::lock_guard l(g_mu);
  ++g_control.supported_calls;
  return g_control.supported;
}
#endif
FAKE_EXPORT int simpler_kernel_mode_init(SimplerDeviceContext* ctx, int32_t, const void*, size_t,
                                         const void*, size_t, const SimplerCallConfig*,
                                         uint64_t gen) {
  std::lock_guard l(g_mu);
  ++g_control.kernel_init_calls;
  g_control.last_generation = gen;
  if (g_control.kernel_init_status == PTO_RUNTIME_ERR_INVALID_ARGUMENT ||
      g_control.kernel_init_status == PTO_RUNTIME_ERR_UNSUPPORTED) {
    return g_control.kernel_init_status;  // refused before taking anything
  }
  ctx->mode = 2;
  ctx->holds_resources = true;
  ctx->static_bytes = 4096;
  return g_control.kernel_init_status;
}
FAKE_EXPORT int simpler_kernel_mode_prepare_callable(SimplerDeviceContext* ctx, const void*, size_t,
                                                     int64_t* id) {
  std::lock_guard l(g_mu);
  ++g_control.prepare_calls;
  if (ctx->mode != 2) return PTO_RUNTIME_ERR_INVALID_STATE;
  if (g_control.prepare_status != 0) {
    *id = -1;
    return g_control.prepare_status;
  }
  if (g_control.prepare_id_mode == 1) return 0;
  *id = g_control.prepare_id_mode == 2 ? -5 : ctx->next_callable++;
  return 0;
}
#ifndef FAKE_OMIT_KERNEL_LAUNCH
FAKE_EXPORT int simpler_kernel_mode_launch(SimplerDeviceContext* ctx, int64_t,
                                           const ChipStorageTaskArgs*, void* stream) {
  std::unique_lock l(g_mu);
  ++g_control.launch_calls;
  ++g_control.launches_in_progress;
  g_cv.notify_all();
  g_cv.wait(l, [] { return g_control.launches_blocked == 0; });
  --g_control.launches_in_progress;
  g_control.last_launch_stream = stream;
  if (ctx->mode != 2) return PTO_RUNTIME_ERR_INVALID_STATE;
  return g_control.launch_status;
}
#endif

// ---- both ----
FAKE_EXPORT int simpler_committed_device_memory(SimplerDeviceContext* ctx, uint64_t* out) {
  std::lock_guard l(g_mu);
  *out = committed(ctx);
  return 0;
}
FAKE_EXPORT int finalize_device(SimplerDeviceContext* ctx) {
  std::lock_guard l(g_mu);
  ++g_control.finalize_calls;
  if (g_control.finalize_failures > 0) {
    --g_control.finalize_failures;
    return g_control.finalize_failure_status;
  }
  for (auto& [p, n] : ctx->allocations) std::free(reinterpret_cast<void*>(p));
  ctx->allocations.clear();
  ctx->static_bytes = 0;
  ctx->holds_resources = false;
  ctx->mode = ctx->mode == 0 ? 0 : -1;  // closed: prepare/launch refused
  return 0;
}
