// simpler runtime host — the C ABI implemented once for every build. Each build's
// exported extern "C" entries (host/abi_entries.inc) forward here with its BuildTraits.
// Every function catches everything and returns a status.
#pragma once

#include <cstddef>
#include <cstdint>

#include "abi/build_traits.h"
#include "simpler/abi/runtime_abi.h"

namespace simpler::rt::host::abi {

int runtime_abi_version(uint32_t* out_version);
int runtime_name(const BuildTraits& traits, const char** out_name);
int create_context(const BuildTraits& traits, SimplerDeviceContext** out_ctx);
int destroy_context(SimplerDeviceContext* ctx);
int last_error(SimplerDeviceContext* ctx, const char** out_message);

int init_device(SimplerDeviceContext* ctx, int32_t device_id, const SimplerCallConfig* prewarm);
int register_callable(SimplerDeviceContext* ctx, const void* image, size_t size, int64_t* out_id);
int unregister_callable(SimplerDeviceContext* ctx, int64_t callable_id);
int prepare_run(SimplerDeviceContext* ctx, int64_t callable_id, const ChipStorageTaskArgs* args,
                const SimplerCallConfig* config, uint64_t* out_run_id);
int launch_run(SimplerDeviceContext* ctx, uint64_t run_id);
int poll_run(SimplerDeviceContext* ctx, uint64_t run_id, int32_t* out_done);
int wait_run(SimplerDeviceContext* ctx, uint64_t run_id, int64_t timeout_us);
int finalize_run(SimplerDeviceContext* ctx, uint64_t run_id);
int run(SimplerDeviceContext* ctx, int64_t callable_id, const ChipStorageTaskArgs* args,
        const SimplerCallConfig* config);
int device_malloc(SimplerDeviceContext* ctx, size_t size, uint64_t* out_device_ptr);
int device_free(SimplerDeviceContext* ctx, uint64_t device_ptr);
int copy_to_device(SimplerDeviceContext* ctx, uint64_t dst_device, const void* src_host,
                   size_t size);
int copy_from_device(SimplerDeviceContext* ctx, void* dst_host, uint64_t src_device, size_t size);
int device_memory_info(SimplerDeviceContext* ctx, uint64_t* out_free, uint64_t* out_total);

int kernel_mode_supported(SimplerDeviceContext* ctx);
int kernel_mode_init(SimplerDeviceContext* ctx, int32_t device_id, const void* aicpu_image,
                     size_t aicpu_size, const void* aicore_image, size_t aicore_size,
                     const SimplerCallConfig* config, uint64_t generation);
int kernel_mode_prepare_callable(SimplerDeviceContext* ctx, const void* image, size_t size,
                                 int64_t* out_callable_id);
int kernel_mode_launch(SimplerDeviceContext* ctx, int64_t callable_id,
                       const ChipStorageTaskArgs* args, void* stream);

int committed_device_memory(SimplerDeviceContext* ctx, uint64_t* out_bytes);
int finalize_device(SimplerDeviceContext* ctx);

}  // namespace simpler::rt::host::abi
