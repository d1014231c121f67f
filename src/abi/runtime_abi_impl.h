// simpler runtime host — the C ABI v2 implemented once for every build. Each build's
// table (abi/abi_entries.inc) points here, passing its BuildTraits where an entry needs
// them. Every function clears the thread's last error, validates the args struct and the
// context handle, catches everything and returns a status.
#pragma once

#include "abi/build_traits.h"
#include "simpler/abi/runtime_abi.h"

namespace simpler::rt::host::abi {

int get_api(const SimplerApi* table, uint32_t major, uint32_t minor, const SimplerApi** out_api,
            const char** out_message);

int last_error(SimplerLastErrorArgs* args);
int runtime_name(const BuildTraits& traits, SimplerRuntimeNameArgs* args);
int context_create(const BuildTraits& traits, SimplerContextCreateArgs* args);
int context_destroy(SimplerContextDestroyArgs* args);

int init_device(SimplerInitDeviceArgs* args);
int register_callable(SimplerRegisterCallableArgs* args);
int unregister_callable(SimplerUnregisterCallableArgs* args);
int prepare_run(SimplerPrepareRunArgs* args);
int launch_run(SimplerLaunchRunArgs* args);
int poll_run(SimplerPollRunArgs* args);
int wait_run(SimplerWaitRunArgs* args);
int finalize_run(SimplerFinalizeRunArgs* args);
int run(SimplerRunArgs* args);
int device_malloc(SimplerDeviceMallocArgs* args);
int device_free(SimplerDeviceFreeArgs* args);
int copy_to_device(SimplerCopyToDeviceArgs* args);
int copy_from_device(SimplerCopyFromDeviceArgs* args);
int device_memory_info(SimplerDeviceMemoryInfoArgs* args);

int kernel_mode_supported(SimplerKernelModeSupportedArgs* args);
int kernel_mode_init(SimplerKernelModeInitArgs* args);
int kernel_mode_prepare_callable(SimplerKernelModePrepareCallableArgs* args);
int kernel_mode_launch(SimplerKernelModeLaunchArgs* args);
int kernel_mode_launch_error(SimplerKernelModeLaunchErrorArgs* args);

int committed_device_memory(SimplerCommittedDeviceMemoryArgs* args);
int finalize_device(SimplerFinalizeDeviceArgs* args);
int abandon_context(SimplerAbandonContextArgs* args);

}  // namespace simpler::rt::host::abi
