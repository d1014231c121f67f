/* simpler — the C ABI of a runtime build (one shared library per (platform, runtime)), v2.
 *
 * A build exports one symbol, simpler_get_api(), which returns a versioned table of
 * function pointers (SimplerApi). A host dlopens the build RTLD_LOCAL, dlsyms that one
 * name, checks the version once, then calls through the table.
 *
 * Every entry takes one pointer to its args struct and returns SIMPLER_OK (0) or a
 * negative status (status.h). Inputs and outputs are fields of the struct; outputs are
 * marked "out" and written by the callee. The first field of every struct is
 * `size_t struct_size`, set by the caller to SIMPLER_<STRUCT>_STRUCT_SIZE of the header it
 * was built against: the callee reads only what that size covers, so a host built
 * against an older 2.x header keeps working. New fields only ever go at the end.
 *
 * Errors: every entry first clears the calling thread's last error; a failing entry
 * records its status and a message there (table entry last_error reads it). The message
 * belongs to that call on that thread: concurrent calls on other threads never overwrite
 * it. No C++ exception ever crosses this boundary.
 *
 * Contexts are validated handles: a SimplerDeviceContext* is looked up in the build's
 * registry before it is used, so a destroyed, foreign or garbage pointer gives
 * PTO_RUNTIME_ERR_INVALID_ARGUMENT, never a crash.
 *
 * A context is latched to one mode for life: program mode (init_device: the runtime owns
 * the device) or kernel mode (kernel_mode_init: the caller owns the device and stream).
 */
#ifndef SIMPLER_ABI_RUNTIME_ABI_H
#define SIMPLER_ABI_RUNTIME_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simpler/abi/chip_types.h"
#include "simpler/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Major: incompatible changes (a host of another major is refused). Minor: entries or
 * fields added at the end (a host may ask for at most the build's minor). */
#define SIMPLER_API_MAJOR 2
#define SIMPLER_API_MINOR 1
/* Kept for hosts that name it: the major version. */
#define SIMPLER_RUNTIME_ABI_VERSION SIMPLER_API_MAJOR

/* Bytes of `type` up to and including `last_field`: the struct_size of a given version. */
#define SIMPLER_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

typedef struct SimplerDeviceContext SimplerDeviceContext; /* opaque, owned by the build */

/* ---- diagnostics --------------------------------------------------------------------- */
typedef struct SimplerLastErrorArgs {
  size_t struct_size;
  int32_t status;      /* out: the status of this thread's last failed call, 0 if none */
  const char* message; /* out: its message, "" if none; valid until this thread's next call */
} SimplerLastErrorArgs;
#define SIMPLER_LAST_ERROR_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerLastErrorArgs, message)

/* ---- identity ------------------------------------------------------------------------ */
typedef struct SimplerRuntimeNameArgs {
  size_t struct_size;
  const char* name; /* out: static, e.g. "tensormap_and_ringbuffer" */
} SimplerRuntimeNameArgs;
#define SIMPLER_RUNTIME_NAME_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerRuntimeNameArgs, name)

/* ---- context ------------------------------------------------------------------------- */
typedef struct SimplerContextCreateArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx; /* out */
} SimplerContextCreateArgs;
#define SIMPLER_CONTEXT_CREATE_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerContextCreateArgs, ctx)

/* Refuses (INVALID_STATE, context left usable) while the context holds device resources
 * that finalize_device has not released. A destroyed or unknown ctx: INVALID_ARGUMENT. */
typedef struct SimplerContextDestroyArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
} SimplerContextDestroyArgs;
#define SIMPLER_CONTEXT_DESTROY_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerContextDestroyArgs, ctx)

/* ---- program mode: the runtime owns the device --------------------------------------- */
/* Makes device_id current on the calling thread and takes it. prewarm may be NULL. */
typedef struct SimplerInitDeviceArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  int32_t device_id;
  const SimplerCallConfig* prewarm;
} SimplerInitDeviceArgs;
#define SIMPLER_INIT_DEVICE_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerInitDeviceArgs, prewarm)

/* Copies the ChipCallable image; writes a fresh id (never reused in this context), -1 on
 * failure. */
typedef struct SimplerRegisterCallableArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  const void* image;
  size_t size;
  int64_t callable_id; /* out */
} SimplerRegisterCallableArgs;
#define SIMPLER_REGISTER_CALLABLE_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerRegisterCallableArgs, callable_id)

typedef struct SimplerUnregisterCallableArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  int64_t callable_id;
} SimplerUnregisterCallableArgs;
#define SIMPLER_UNREGISTER_CALLABLE_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerUnregisterCallableArgs, callable_id)

/* A run: prepare (validate, stage HOST tensors) -> launch -> poll/wait -> finalize. */
typedef struct SimplerPrepareRunArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  int64_t callable_id;
  const ChipStorageTaskArgs* args;
  const SimplerCallConfig* config; /* NULL: defaults */
  uint64_t run_id;                 /* out: 0 on failure */
} SimplerPrepareRunArgs;
#define SIMPLER_PREPARE_RUN_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerPrepareRunArgs, run_id)

typedef struct SimplerLaunchRunArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t run_id;
} SimplerLaunchRunArgs;
#define SIMPLER_LAUNCH_RUN_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerLaunchRunArgs, run_id)

typedef struct SimplerPollRunArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t run_id;
  bool done; /* out: the run has finished (wait_run then reports its status) */
} SimplerPollRunArgs;
#define SIMPLER_POLL_RUN_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerPollRunArgs, done)

/* Returns the run's status, or PTO_RUNTIME_ERR_TIMEOUT (the run keeps going). */
typedef struct SimplerWaitRunArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t run_id;
  int64_t timeout_us; /* < 0: wait forever */
} SimplerWaitRunArgs;
#define SIMPLER_WAIT_RUN_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerWaitRunArgs, timeout_us)

/* Waits, copies HOST outputs back, frees the run's resources and id; the run's status. */
typedef struct SimplerFinalizeRunArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t run_id;
} SimplerFinalizeRunArgs;
#define SIMPLER_FINALIZE_RUN_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerFinalizeRunArgs, run_id)

/* prepare + launch + finalize. */
typedef struct SimplerRunArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  int64_t callable_id;
  const ChipStorageTaskArgs* args;
  const SimplerCallConfig* config; /* NULL: defaults */
} SimplerRunArgs;
#define SIMPLER_RUN_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerRunArgs, config)

typedef struct SimplerDeviceMallocArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  size_t size;
  uint64_t device_ptr; /* out: 0 on failure */
} SimplerDeviceMallocArgs;
#define SIMPLER_DEVICE_MALLOC_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerDeviceMallocArgs, device_ptr)

typedef struct SimplerDeviceFreeArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t device_ptr;
} SimplerDeviceFreeArgs;
#define SIMPLER_DEVICE_FREE_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerDeviceFreeArgs, device_ptr)

typedef struct SimplerCopyToDeviceArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t dst_device;
  const void* src_host;
  size_t size;
} SimplerCopyToDeviceArgs;
#define SIMPLER_COPY_TO_DEVICE_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerCopyToDeviceArgs, size)

typedef struct SimplerCopyFromDeviceArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  void* dst_host;
  uint64_t src_device;
  size_t size;
} SimplerCopyFromDeviceArgs;
#define SIMPLER_COPY_FROM_DEVICE_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerCopyFromDeviceArgs, size)

typedef struct SimplerDeviceMemoryInfoArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t free_bytes;  /* out */
  uint64_t total_bytes; /* out */
} SimplerDeviceMemoryInfoArgs;
#define SIMPLER_DEVICE_MEMORY_INFO_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerDeviceMemoryInfoArgs, total_bytes)

/* ---- kernel mode: the caller owns the device and the stream -------------------------- */
/* Answers from the build alone on a fresh context; takes no device. */
typedef struct SimplerKernelModeSupportedArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  bool supported; /* out: false on failure */
} SimplerKernelModeSupportedArgs;
#define SIMPLER_KERNEL_MODE_SUPPORTED_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerKernelModeSupportedArgs, supported)

/* Executor images are optional (NULL/0 = built in); a pointer without a size or a size
 * without a pointer is INVALID_ARGUMENT. generation is minted by the caller (nonzero). */
typedef struct SimplerKernelModeInitArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  int32_t device_id;
  const void* aicpu_image;
  size_t aicpu_size;
  const void* aicore_image;
  size_t aicore_size;
  const SimplerCallConfig* config;
  uint64_t generation;
} SimplerKernelModeInitArgs;
#define SIMPLER_KERNEL_MODE_INIT_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerKernelModeInitArgs, generation)

/* Writes a fresh sequential id on success and -1 on every failure. */
typedef struct SimplerKernelModePrepareCallableArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  const void* image;
  size_t size;
  int64_t callable_id; /* out */
} SimplerKernelModePrepareCallableArgs;
#define SIMPLER_KERNEL_MODE_PREPARE_CALLABLE_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerKernelModePrepareCallableArgs, callable_id)

/* stream is the caller's sim_stream_t. Enqueues and returns. */
typedef struct SimplerKernelModeLaunchArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  int64_t callable_id;
  const ChipStorageTaskArgs* args;
  void* stream;
} SimplerKernelModeLaunchArgs;
#define SIMPLER_KERNEL_MODE_LAUNCH_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerKernelModeLaunchArgs, stream)

/* The message of this context's most recent launch that failed on the chip (launches
 * fail asynchronously, on the caller's stream, so no call owns that message). */
typedef struct SimplerKernelModeLaunchErrorArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  const char* message; /* out: "" if none; valid until this thread's next call */
} SimplerKernelModeLaunchErrorArgs;
#define SIMPLER_KERNEL_MODE_LAUNCH_ERROR_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerKernelModeLaunchErrorArgs, message)

/* ---- both modes ---------------------------------------------------------------------- */
typedef struct SimplerCommittedDeviceMemoryArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
  uint64_t bytes; /* out: device bytes this context holds right now */
} SimplerCommittedDeviceMemoryArgs;
#define SIMPLER_COMMITTED_DEVICE_MEMORY_ARGS_STRUCT_SIZE \
  SIMPLER_STRUCT_SIZE(SimplerCommittedDeviceMemoryArgs, bytes)

/* Releases this context's device resources (and, in program mode, the device). Kernel
 * mode: no stream sync, no device reset; INVALID_STATE while launched work is unfinished.
 * A failed release returns its status and keeps what is left for a retry. Idempotent. */
typedef struct SimplerFinalizeDeviceArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
} SimplerFinalizeDeviceArgs;
#define SIMPLER_FINALIZE_DEVICE_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerFinalizeDeviceArgs, ctx)

/* Since 2.1. The host gives up on a program-mode context whose launched work will not
 * finish (a run stuck in a kernel past the host's grace period, no watchdog): the context
 * refuses everything from now on (INVALID_STATE) and its device claim is released, so a new
 * context may init the same device at once. Nothing else is released or waited for: the
 * stuck run may still execute and touch the context's engine, stream, memory and loaded
 * programs, so they stay allocated for the life of the process, and the context must never
 * be finalized or destroyed (both refuse). Idempotent. A fresh or kernel-mode context:
 * INVALID_STATE (a kernel-mode context's work is on the caller's streams). */
typedef struct SimplerAbandonContextArgs {
  size_t struct_size;
  SimplerDeviceContext* ctx;
} SimplerAbandonContextArgs;
#define SIMPLER_ABANDON_CONTEXT_ARGS_STRUCT_SIZE SIMPLER_STRUCT_SIZE(SimplerAbandonContextArgs, ctx)

/* ---- the table ----------------------------------------------------------------------- */
typedef struct SimplerApi {
  size_t struct_size; /* covers every entry the build has; check before using a newer one */
  uint32_t major;     /* SIMPLER_API_MAJOR of the build */
  uint32_t minor;     /* SIMPLER_API_MINOR of the build */
  int (*last_error)(SimplerLastErrorArgs* args);
  int (*runtime_name)(SimplerRuntimeNameArgs* args);
  int (*context_create)(SimplerContextCreateArgs* args);
  int (*context_destroy)(SimplerContextDestroyArgs* args);
  int (*init_device)(SimplerInitDeviceArgs* args);
  int (*register_callable)(SimplerRegisterCallableArgs* args);
  int (*unregister_callable)(SimplerUnregisterCallableArgs* args);
  int (*prepare_run)(SimplerPrepareRunArgs* args);
  int (*launch_run)(SimplerLaunchRunArgs* args);
  int (*poll_run)(SimplerPollRunArgs* args);
  int (*wait_run)(SimplerWaitRunArgs* args);
  int (*finalize_run)(SimplerFinalizeRunArgs* args);
  int (*run)(SimplerRunArgs* args);
  int (*device_malloc)(SimplerDeviceMallocArgs* args);
  int (*device_free)(SimplerDeviceFreeArgs* args);
  int (*copy_to_device)(SimplerCopyToDeviceArgs* args);
  int (*copy_from_device)(SimplerCopyFromDeviceArgs* args);
  int (*device_memory_info)(SimplerDeviceMemoryInfoArgs* args);
  int (*kernel_mode_supported)(SimplerKernelModeSupportedArgs* args);
  int (*kernel_mode_init)(SimplerKernelModeInitArgs* args);
  int (*kernel_mode_prepare_callable)(SimplerKernelModePrepareCallableArgs* args);
  int (*kernel_mode_launch)(SimplerKernelModeLaunchArgs* args);
  int (*kernel_mode_launch_error)(SimplerKernelModeLaunchErrorArgs* args);
  int (*committed_device_memory)(SimplerCommittedDeviceMemoryArgs* args);
  int (*finalize_device)(SimplerFinalizeDeviceArgs* args);
  /* 2.1: check struct_size >= SIMPLER_API_STRUCT_SIZE_2_1 before using these. */
  int (*abandon_context)(SimplerAbandonContextArgs* args);
} SimplerApi;
/* The table of each minor version; a host needs the one of the newest entry it uses. */
#define SIMPLER_API_STRUCT_SIZE_2_0 SIMPLER_STRUCT_SIZE(SimplerApi, finalize_device)
#define SIMPLER_API_STRUCT_SIZE_2_1 SIMPLER_STRUCT_SIZE(SimplerApi, abandon_context)
#define SIMPLER_API_STRUCT_SIZE SIMPLER_API_STRUCT_SIZE_2_1

/* The one exported symbol. Pass the SIMPLER_API_MAJOR / SIMPLER_API_MINOR the host was
 * built against. On success writes the build's table to *out_api (static, valid while the
 * library stays loaded) and "" to *out_message. Another major, or a minor newer than the
 * build's: PTO_RUNTIME_ERR_UNSUPPORTED, *out_api = NULL and a static message saying which
 * versions the build speaks. NULL out_api: INVALID_ARGUMENT. out_message may be NULL. */
int simpler_get_api(uint32_t major, uint32_t minor, const SimplerApi** out_api,
                    const char** out_message);
typedef int (*SimplerGetApiFn)(uint32_t major, uint32_t minor, const SimplerApi** out_api,
                               const char** out_message);
#define SIMPLER_GET_API_SYMBOL "simpler_get_api"

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_ABI_RUNTIME_ABI_H */
