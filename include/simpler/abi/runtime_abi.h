/* simpler — the C ABI of a runtime build (one shared library per (platform, runtime)).
 *
 * Every entry returns SIMPLER_OK (0) or a negative status (see status.h); outputs are
 * written through explicit pointers. No C++ exception ever crosses this boundary.
 * ChipWorker dlopens the build RTLD_LOCAL and resolves these names with dlsym.
 *
 * A context is latched to one mode for life: program mode (simpler_init_device: the
 * runtime owns the device) or kernel mode (simpler_kernel_mode_init: the caller owns
 * the device and the stream).
 */
#ifndef SIMPLER_ABI_RUNTIME_ABI_H
#define SIMPLER_ABI_RUNTIME_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "simpler/abi/chip_types.h"
#include "simpler/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SIMPLER_RUNTIME_ABI_VERSION 1

typedef struct SimplerDeviceContext SimplerDeviceContext; /* opaque, owned by the build */

/* ---- identity ---------------------------------------------------------------------- */
/* Writes SIMPLER_RUNTIME_ABI_VERSION of the build. */
int simpler_runtime_abi_version(uint32_t* out_version);
/* Writes a static NUL-terminated name, e.g. "tensormap_and_ringbuffer". */
int simpler_runtime_name(const char** out_name);

/* ---- context ----------------------------------------------------------------------- */
int create_device_context(SimplerDeviceContext** out_ctx);
/* Refuses (INVALID_STATE, context left usable) while the context holds device resources
 * that finalize_device has not released. */
int destroy_device_context(SimplerDeviceContext* ctx);

/* ---- program mode: the runtime owns the device ------------------------------------- */
/* Makes device_id current on the calling thread and takes it. A second owner of the same
 * device (any context of this build) is refused with INVALID_STATE. prewarm may be NULL;
 * when given, the rings and threads it sizes are set up now instead of at first run. */
int simpler_init_device(SimplerDeviceContext* ctx, int32_t device_id,
                        const SimplerCallConfig* prewarm);
/* Copies the ChipCallable image; writes a fresh id (never reused in this context). */
int simpler_register_callable(SimplerDeviceContext* ctx, const void* image, size_t size,
                              int64_t* out_callable_id);
/* INVALID_STATE while a prepared run still uses it. */
int simpler_unregister_callable(SimplerDeviceContext* ctx, int64_t callable_id);

/* A run: prepare (validate, stage HOST tensors) -> launch -> poll/wait -> finalize (copy
 * back HOST outputs, release staging). config may be NULL (defaults). */
int simpler_prepare_run(SimplerDeviceContext* ctx, int64_t callable_id,
                        const ChipStorageTaskArgs* args, const SimplerCallConfig* config,
                        uint64_t* out_run_id);
int simpler_launch_run(SimplerDeviceContext* ctx, uint64_t run_id);
/* *out_done = 1 when the run has finished (its status is then returned by wait). */
int simpler_poll_run(SimplerDeviceContext* ctx, uint64_t run_id, int32_t* out_done);
/* timeout_us < 0: wait forever. Returns the run's status, or PTO_RUNTIME_ERR_TIMEOUT
 * (the run keeps going). Repeatable: a finished run reports the same status again. */
int simpler_wait_run(SimplerDeviceContext* ctx, uint64_t run_id, int64_t timeout_us);
/* Waits for the run, copies HOST outputs back, frees the run's resources and id.
 * Returns the run's status. */
int simpler_finalize_run(SimplerDeviceContext* ctx, uint64_t run_id);
/* prepare + launch + finalize. */
int simpler_run(SimplerDeviceContext* ctx, int64_t callable_id, const ChipStorageTaskArgs* args,
                const SimplerCallConfig* config);

int simpler_device_malloc(SimplerDeviceContext* ctx, size_t size, uint64_t* out_device_ptr);
int simpler_device_free(SimplerDeviceContext* ctx, uint64_t device_ptr);
int simpler_copy_to_device(SimplerDeviceContext* ctx, uint64_t dst_device, const void* src_host,
                           size_t size);
int simpler_copy_from_device(SimplerDeviceContext* ctx, void* dst_host, uint64_t src_device,
                             size_t size);
int simpler_device_memory_info(SimplerDeviceContext* ctx, uint64_t* out_free, uint64_t* out_total);

/* ---- kernel mode: the caller owns the device and the stream ------------------------ */
/* Nonzero if this build runs kernel mode. Answers from the build alone on a fresh
 * context; takes no device. */
int simpler_kernel_mode_supported(SimplerDeviceContext* ctx);
/* Executor images are optional (NULL/0 = built in); a pointer without a size or a size
 * without a pointer is INVALID_ARGUMENT. generation is minted by the caller (nonzero). */
int simpler_kernel_mode_init(SimplerDeviceContext* ctx, int32_t device_id, const void* aicpu_image,
                             size_t aicpu_size, const void* aicore_image, size_t aicore_size,
                             const SimplerCallConfig* config, uint64_t generation);
/* Writes a fresh sequential id on success and -1 on every failure. */
int simpler_kernel_mode_prepare_callable(SimplerDeviceContext* ctx, const void* image, size_t size,
                                         int64_t* out_callable_id);
/* stream is the caller's sim_stream_t. Enqueues and returns. */
int simpler_kernel_mode_launch(SimplerDeviceContext* ctx, int64_t callable_id,
                               const ChipStorageTaskArgs* args, void* stream);

/* ---- both modes -------------------------------------------------------------------- */
/* Bytes of device memory this context holds right now. */
int simpler_committed_device_memory(SimplerDeviceContext* ctx, uint64_t* out_bytes);
/* Releases this context's device resources (and, in program mode, the device). Kernel
 * mode: no stream sync, no device reset; INVALID_STATE while launched work is unfinished.
 * A failed release returns its status and keeps what is left for a retry. Idempotent. */
int finalize_device(SimplerDeviceContext* ctx);

/* ---- diagnostics (added) ----------------------------------------------------------- */
/* Writes the message of the last error recorded on this context (by a failed entry or a
 * failed kernel-mode launch), "" when none. The text is copied into a per-thread buffer:
 * valid until this thread calls simpler_last_error again. */
int simpler_last_error(SimplerDeviceContext* ctx, const char** out_message);

#ifdef __cplusplus
}
#endif
#endif /* SIMPLER_ABI_RUNTIME_ABI_H */
