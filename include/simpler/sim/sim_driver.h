/* simpler — the simulated device driver (libsimpler_sim), C API.
 *
 * One driver instance per process, shared by the framework (which owns a device and a
 * stream) and every runtime build. Shaped like an accelerator driver API: every call
 * returns SIMPLER_OK or a SIM_ERR_* status (status.h); outputs go through pointers.
 *
 * Devices are simulated in host memory: a device pointer is a real address inside the
 * device's arena, so kernels dereference it directly.
 */
#ifndef SIMPLER_SIM_SIM_DRIVER_H
#define SIMPLER_SIM_SIM_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "simpler/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_DRIVER_API_VERSION 1

typedef struct SimStream* sim_stream_t;
typedef struct SimEvent* sim_event_t;

typedef enum SimMemcpyKind {
  SIM_MEMCPY_HOST_TO_DEVICE = 0,
  SIM_MEMCPY_DEVICE_TO_HOST = 1,
  SIM_MEMCPY_DEVICE_TO_DEVICE = 2
} SimMemcpyKind;

/* Process-wide shape of the simulated machine. Environment variables override the
 * defaults at first use: SIMPLER_SIM_DEVICES, SIMPLER_SIM_DEVICE_MEMORY (bytes),
 * SIMPLER_SIM_CLUSTERS, SIMPLER_SIM_AICPU_THREADS. */
typedef struct SimConfig {
  int32_t device_count;        /* default 4 */
  int32_t clusters_per_device; /* default 8; each cluster = 1 AIC + 2 AIV cores */
  int32_t aicpu_threads;       /* default 4 (1 orchestrator + 3 schedulers) */
  int32_t reserved;
  uint64_t device_memory_bytes; /* per device; default 1 GiB (reserved lazily) */
} SimConfig;

typedef struct SimTopology {
  int32_t clusters;
  int32_t aic_cores; /* == clusters */
  int32_t aiv_cores; /* == 2 * clusters */
  int32_t aicpu_threads;
} SimTopology;

int sim_driver_api_version(uint32_t* out_version);
int sim_get_config(SimConfig* out);
/* Only before any device has been used; afterwards SIM_ERR_ALREADY_INITIALIZED. */
int sim_configure(const SimConfig* config);

/* ---- devices ----------------------------------------------------------------------- */
int sim_get_device_count(int32_t* out_count);
int sim_set_device(int32_t device);      /* current device of the calling thread */
int sim_get_device(int32_t* out_device); /* SIM_ERR_NO_DEVICE until set on this thread */
int sim_device_topology(int32_t device, SimTopology* out);
/* Waits for the device's streams, destroys them and frees all its memory. Counted, so
 * tests can assert that a library never reset a device it does not own. */
int sim_device_reset(int32_t device);
/* How many times the device was reset so far. A library that holds memory or streams of
 * the device records it and, when it changed, knows they are gone (frees nothing twice). */
int sim_device_reset_epoch(int32_t device, uint64_t* out_epoch);
/* Changes whenever an allocation of the device stops being valid for new work or changes
 * state (sim_free, the release of a stream-ordered free, a device reset); allocations leave
 * it unchanged. A library that found [ptr, ptr+size) valid (sim_pointer_device) after
 * reading generation g may reuse that answer without asking again while it still reads g
 * (an acquire load: a free that happened-before the read has changed it). */
int sim_device_memory_generation(int32_t device, uint64_t* out_generation);

/* ---- memory (current device) ------------------------------------------------------- */
int sim_malloc(void** out_ptr, size_t size); /* >= 1024-byte aligned */
/* sim_malloc on `device` instead of the calling thread's current device (runtimes allocate
 * from threads whose current device they do not own). Counted as "malloc". */
int sim_malloc_on_device(int32_t device, void** out_ptr, size_t size);
/* ptr: the exact base of a live allocation, on any device. Ordered after the work already
 * queued on every stream (the CUDA stream-ordered allocator's rule): the pointer is invalid
 * for new work at once, but its memory is reused only after that work ran. */
int sim_free(void* ptr);
int sim_memset(void* device_ptr, int value, size_t size);
int sim_memcpy(void* dst, const void* src, size_t size, SimMemcpyKind kind);
int sim_mem_get_info(size_t* out_free, size_t* out_total);
/* Device owning [ptr, ptr+size) inside one live allocation, or SIM_ERR_INVALID_POINTER /
 * SIM_ERR_OUT_OF_RANGE. Used by runtimes to validate DEVICE tensors. */
int sim_pointer_device(const void* ptr, size_t size, int32_t* out_device);

#define SIM_ALLOCATION_FREE_PENDING 1u /* freed; kept until the work queued before it ran */
typedef struct SimAllocation {
  uint64_t base; /* first byte */
  uint64_t size; /* bytes requested at sim_malloc */
  int32_t device;
  uint32_t flags; /* SIM_ALLOCATION_* */
} SimAllocation;
/* The allocation holding the byte at ptr, on any device: live, or freed while stream work
 * queued before the free may still use it (flags SIM_ALLOCATION_FREE_PENDING). Runtimes use
 * it to check, during a run, addresses an orchestration hands them. SIM_ERR_INVALID_POINTER
 * when no allocation holds ptr. */
int sim_pointer_allocation(const void* ptr, SimAllocation* out);

/* ---- streams (created on the current device, in-order execution) ------------------- */
int sim_stream_create(sim_stream_t* out_stream);
/* Waits for the stream's pending work, then destroys it. */
int sim_stream_destroy(sim_stream_t stream);
/* Waits until everything enqueued so far ran. Returns the stream's sticky error, if any. */
int sim_stream_synchronize(sim_stream_t stream);
/* Waits at most timeout_us for what was enqueued so far: SIMPLER_OK once it ran (then call
 * sim_stream_synchronize for the sticky status), SIMPLER_NOT_READY when the time is up.
 * Not counted, no fault injection: lets a caller synchronize in slices (e.g. to honour
 * Ctrl-C between them). */
int sim_stream_wait(sim_stream_t stream, int64_t timeout_us);
/* SIMPLER_OK when idle, SIMPLER_NOT_READY while work is pending, else the sticky error. */
int sim_stream_query(sim_stream_t stream);
int sim_stream_device(sim_stream_t stream, int32_t* out_device);

int sim_memcpy_async(void* dst, const void* src, size_t size, SimMemcpyKind kind,
                     sim_stream_t stream);
int sim_memset_async(void* device_ptr, int value, size_t size, sim_stream_t stream);
typedef void (*sim_host_fn)(void* user_data);
int sim_launch_host_func(sim_stream_t stream, sim_host_fn fn, void* user_data);

/* A device job runs in stream order on the device's execution resources. Its return
 * value becomes the stream's sticky status when nonzero. `cleanup` (may be NULL) is
 * called exactly once after the job ran or was skipped because of an earlier error. */
typedef int (*sim_device_job_fn)(void* user_data);
typedef void (*sim_job_cleanup_fn)(void* user_data);
int sim_launch_device_job(sim_stream_t stream, sim_device_job_fn job, void* user_data,
                          sim_job_cleanup_fn cleanup);

/* ---- events ------------------------------------------------------------------------ */
int sim_event_create(sim_event_t* out_event);
int sim_event_record(sim_event_t event, sim_stream_t stream);
int sim_stream_wait_event(sim_stream_t stream, sim_event_t event);
int sim_event_synchronize(sim_event_t event);
int sim_event_query(sim_event_t event); /* SIMPLER_OK / SIMPLER_NOT_READY */
int sim_event_destroy(sim_event_t event);

/* ---- test hooks -------------------------------------------------------------------- */
/* Operation names: "malloc", "free", "memcpy", "memset", "stream_create",
 * "stream_destroy", "stream_synchronize", "stream_query", "event_create",
 * "event_destroy", "event_record", "event_synchronize", "launch" (device job),
 * "host_func", "set_device", "device_reset". */
/* The next `count` calls of `op` fail with `status` (0 = SIM_ERR_INJECTED_FAULT). */
int sim_inject_fault(const char* op, int32_t count, int32_t status);
int sim_clear_faults(void);
int sim_call_count(const char* op, uint64_t* out_count); /* calls since the last reset */
int sim_reset_counters(void);

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_SIM_SIM_DRIVER_H */
