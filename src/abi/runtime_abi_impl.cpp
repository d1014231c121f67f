#include "abi/runtime_abi_impl.h"

#include <exception>
#include <new>
#include <string>

#include "abi/abi_error.h"
#include "abi/context.h"
#include "abi/context_registry.h"
#include "abi/driver.h"
#include "abi/thread_error.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt::host::abi {
namespace {

// Sizes of 2.0 args structs whose last field is a pointer to a struct (clang-tidy reads
// sizeof(that member) as a suspicious sizeof(A*); it is exactly what is meant).
// NOLINTBEGIN(bugprone-sizeof-expression)
constexpr size_t kContextCreateSize = SIMPLER_CONTEXT_CREATE_ARGS_STRUCT_SIZE;
constexpr size_t kContextDestroySize = SIMPLER_CONTEXT_DESTROY_ARGS_STRUCT_SIZE;
constexpr size_t kInitDeviceSize = SIMPLER_INIT_DEVICE_ARGS_STRUCT_SIZE;
constexpr size_t kRunSize = SIMPLER_RUN_ARGS_STRUCT_SIZE;
constexpr size_t kFinalizeDeviceSize = SIMPLER_FINALIZE_DEVICE_ARGS_STRUCT_SIZE;
constexpr size_t kAbandonContextSize = SIMPLER_ABANDON_CONTEXT_ARGS_STRUCT_SIZE;
// NOLINTEND(bugprone-sizeof-expression)

// The boundary of every entry: clears the thread's last error, checks the args struct
// covers the fields of this version, runs fn(args), and turns every exception into a
// status and the thread's last error. A status returned without a message (a run's own
// status, say) is recorded by name so last_error never reports success for a failure.
template <typename Args, typename Fn>
int guarded(const char* entry, Args* args, size_t required_size, Fn&& fn) noexcept {
  clear_thread_error();
  try {
    if (args == nullptr) fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "args is NULL");
    if (args->struct_size < required_size) {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
           "args->struct_size is " + std::to_string(args->struct_size) + ", smaller than the " +
               std::to_string(required_size) +
               " bytes of C ABI 2.0; set it to the SIMPLER_*_STRUCT_SIZE of this args struct");
    }
    const int status = fn(*args);
    if (status != SIMPLER_OK && thread_error_status() == SIMPLER_OK) {
      set_thread_error(status, entry, simpler_status_name(status));
    }
    return status;
  } catch (const AbiError& e) {
    set_thread_error(e.status(), entry, e.what());
    return e.status();
  } catch (const TaskInterfaceError& e) {
    set_thread_error(PTO_RUNTIME_ERR_INVALID_ARGUMENT, entry, e.what());
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    set_thread_error(PTO_RUNTIME_ERR_INTERNAL, entry, "out of host memory");
    return PTO_RUNTIME_ERR_INTERNAL;
  } catch (const std::exception& e) {
    set_thread_error(PTO_RUNTIME_ERR_INTERNAL, entry, e.what());
    return PTO_RUNTIME_ERR_INTERNAL;
  } catch (...) {
    set_thread_error(PTO_RUNTIME_ERR_INTERNAL, entry, "unknown exception");
    return PTO_RUNTIME_ERR_INTERNAL;
  }
}

void require(bool ok, const char* message) {
  if (!ok) fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, message);
}

void check_config(const SimplerCallConfig& config, const char* name) {
  std::string why = validate_call_config(config);
  if (!why.empty()) fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, std::string(name) + ": " + why);
}

ProgramMode& program_of(SimplerDeviceContext& ctx) {
  switch (ctx.mode.load(std::memory_order_acquire)) {
    case ContextMode::Program:
      return *ctx.program;
    case ContextMode::Kernel:
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "this is a kernel-mode context; program-mode entries are refused");
    case ContextMode::Fresh:
      break;
  }
  fail(PTO_RUNTIME_ERR_INVALID_STATE, "the context is not initialized; call init_device first");
}

KernelMode& kernel_of(SimplerDeviceContext& ctx) {
  switch (ctx.mode.load(std::memory_order_acquire)) {
    case ContextMode::Kernel:
      return *ctx.kernel;
    case ContextMode::Program:
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "this is a program-mode context; kernel-mode entries are refused");
    case ContextMode::Fresh:
      break;
  }
  fail(PTO_RUNTIME_ERR_INVALID_STATE,
       ctx.traits.kernel_mode_supported
           ? "the context is not a kernel-mode context; call kernel_mode_init first"
           : "the context is not a kernel-mode context (this runtime build has no kernel mode)");
}

const char* mode_name(ContextMode mode) {
  return mode == ContextMode::Program ? "program" : mode == ContextMode::Kernel ? "kernel" : "no";
}

void refuse_second_init(SimplerDeviceContext& ctx) {
  ContextMode mode = ctx.mode.load(std::memory_order_acquire);
  if (mode != ContextMode::Fresh) {
    fail(PTO_RUNTIME_ERR_INVALID_STATE,
         std::string("the context is latched to ") + mode_name(mode) +
             " mode for life; create a new context for another init");
  }
}

void check_may_destroy(SimplerDeviceContext& ctx) {
  std::lock_guard<std::mutex> lock(ctx.init_mutex);
  const bool holds = (ctx.program && ctx.program->holds_resources()) ||
                     (ctx.kernel && ctx.kernel->holds_resources());
  if (holds) {
    fail(PTO_RUNTIME_ERR_INVALID_STATE,
         "the context still holds device resources; call finalize_device first (the context is "
         "unchanged and still usable)");
  }
}

}  // namespace

int get_api(const SimplerApi* table, uint32_t major, uint32_t minor, const SimplerApi** out_api,
            const char** out_message) {
  static constexpr const char* kOtherMajor =
      "this runtime build speaks simpler C ABI 2.x only; the host was built against another "
      "major version. Rebuild the host (or pick a runtime build) for the same major version.";
  static constexpr const char* kNewerMinor =
      "the host needs a newer minor version of simpler C ABI 2 than this runtime build has; "
      "use a newer runtime build.";
  if (out_message != nullptr) *out_message = "";
  if (out_api == nullptr) {
    if (out_message != nullptr) *out_message = "out_api is NULL";
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  *out_api = nullptr;
  if (major != SIMPLER_API_MAJOR || minor > SIMPLER_API_MINOR) {
    if (out_message != nullptr)
      *out_message = major != SIMPLER_API_MAJOR ? kOtherMajor : kNewerMinor;
    return PTO_RUNTIME_ERR_UNSUPPORTED;
  }
  *out_api = table;
  return SIMPLER_OK;
}

int last_error(SimplerLastErrorArgs* args) {
  // Reads, never clears: the point is to see the previous call's error.
  if (args == nullptr || args->struct_size < SIMPLER_LAST_ERROR_ARGS_STRUCT_SIZE) {
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  args->status = thread_error_status();
  args->message = thread_error_message();
  return SIMPLER_OK;
}

int runtime_name(const BuildTraits& traits, SimplerRuntimeNameArgs* args) {
  return guarded("runtime_name", args, SIMPLER_RUNTIME_NAME_ARGS_STRUCT_SIZE,
                 [&](SimplerRuntimeNameArgs& a) {
                   a.name = traits.name;
                   return SIMPLER_OK;
                 });
}

int context_create(const BuildTraits& traits, SimplerContextCreateArgs* args) {
  return guarded("context_create", args, kContextCreateSize, [&](SimplerContextCreateArgs& a) {
    a.ctx = nullptr;
    a.ctx = register_new_context(traits);
    return SIMPLER_OK;
  });
}

int context_destroy(SimplerContextDestroyArgs* args) {
  return guarded("context_destroy", args, kContextDestroySize, [&](SimplerContextDestroyArgs& a) {
    unregister_context(a.ctx, &check_may_destroy);
    return SIMPLER_OK;
  });
}

// ---- program mode ---------------------------------------------------------------------

int init_device(SimplerInitDeviceArgs* args) {
  return guarded("init_device", args, kInitDeviceSize, [&](SimplerInitDeviceArgs& a) {
    ContextRef ref = find_context(a.ctx);
    SimplerDeviceContext& ctx = *ref;
    int32_t count = 0;
    check_driver(sim_get_device_count(&count), "counting devices");
    if (a.device_id < 0 || a.device_id >= count) {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "device_id " + std::to_string(a.device_id) +
                                                 " is out of range (" + std::to_string(count) +
                                                 " devices)");
    }
    if (a.prewarm != nullptr) check_config(*a.prewarm, "prewarm");
    std::lock_guard<std::mutex> lock(ctx.init_mutex);
    refuse_second_init(ctx);
    DeviceClaim claim = DeviceClaim::try_take(ClaimKind::Program, a.device_id);
    if (!claim.held()) {
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "device " + std::to_string(a.device_id) +
               " is already owned by another program-mode context of this "
               "runtime build; close that Worker first " SIMPLER_HOW_TO_CLOSE);
    }
    ctx.program = std::make_unique<ProgramMode>(ctx.traits, a.device_id, std::move(claim));
    ctx.mode.store(ContextMode::Program, std::memory_order_release);
    ctx.program->open(a.prewarm);
    return SIMPLER_OK;
  });
}

int register_callable(SimplerRegisterCallableArgs* args) {
  return guarded("register_callable", args, SIMPLER_REGISTER_CALLABLE_ARGS_STRUCT_SIZE,
                 [&](SimplerRegisterCallableArgs& a) {
                   a.callable_id = -1;
                   ContextRef ref = find_context(a.ctx);
                   require(a.image != nullptr && a.size != 0,
                           "image: NULL or 0 bytes; pass the ChipCallable image");
                   a.callable_id = program_of(*ref).register_callable(a.image, a.size);
                   return SIMPLER_OK;
                 });
}

int unregister_callable(SimplerUnregisterCallableArgs* args) {
  return guarded("unregister_callable", args, SIMPLER_UNREGISTER_CALLABLE_ARGS_STRUCT_SIZE,
                 [&](SimplerUnregisterCallableArgs& a) {
                   ContextRef ref = find_context(a.ctx);
                   program_of(*ref).unregister_callable(a.callable_id);
                   return SIMPLER_OK;
                 });
}

int prepare_run(SimplerPrepareRunArgs* args) {
  return guarded("prepare_run", args, SIMPLER_PREPARE_RUN_ARGS_STRUCT_SIZE,
                 [&](SimplerPrepareRunArgs& a) {
                   a.run_id = 0;
                   ContextRef ref = find_context(a.ctx);
                   require(a.args != nullptr, "args->args is NULL");
                   a.run_id = program_of(*ref).prepare_run(a.callable_id, *a.args, a.config);
                   return SIMPLER_OK;
                 });
}

int launch_run(SimplerLaunchRunArgs* args) {
  return guarded("launch_run", args, SIMPLER_LAUNCH_RUN_ARGS_STRUCT_SIZE,
                 [&](SimplerLaunchRunArgs& a) {
                   ContextRef ref = find_context(a.ctx);
                   program_of(*ref).launch_run(a.run_id);
                   return SIMPLER_OK;
                 });
}

int poll_run(SimplerPollRunArgs* args) {
  return guarded("poll_run", args, SIMPLER_POLL_RUN_ARGS_STRUCT_SIZE, [&](SimplerPollRunArgs& a) {
    a.done = false;
    ContextRef ref = find_context(a.ctx);
    a.done = program_of(*ref).poll_run(a.run_id);
    return SIMPLER_OK;
  });
}

int wait_run(SimplerWaitRunArgs* args) {
  return guarded("wait_run", args, SIMPLER_WAIT_RUN_ARGS_STRUCT_SIZE, [&](SimplerWaitRunArgs& a) {
    ContextRef ref = find_context(a.ctx);
    return program_of(*ref).wait_run(a.run_id, a.timeout_us);
  });
}

int finalize_run(SimplerFinalizeRunArgs* args) {
  return guarded("finalize_run", args, SIMPLER_FINALIZE_RUN_ARGS_STRUCT_SIZE,
                 [&](SimplerFinalizeRunArgs& a) {
                   ContextRef ref = find_context(a.ctx);
                   return program_of(*ref).finalize_run(a.run_id);
                 });
}

int run(SimplerRunArgs* args) {
  return guarded("run", args, kRunSize, [&](SimplerRunArgs& a) {
    ContextRef ref = find_context(a.ctx);
    require(a.args != nullptr, "args->args is NULL");
    ProgramMode& program = program_of(*ref);
    const uint64_t run_id = program.prepare_run(a.callable_id, *a.args, a.config);
    try {
      program.launch_run(run_id);
    } catch (...) {
      try {
        (void)program.finalize_run(run_id);  // releases the staging of the unlaunched run
      } catch (...) {
        // The launch failure is the status to report; leftovers stay for finalize_device.
      }
      throw;
    }
    return program.finalize_run(run_id);
  });
}

int device_malloc(SimplerDeviceMallocArgs* args) {
  return guarded("device_malloc", args, SIMPLER_DEVICE_MALLOC_ARGS_STRUCT_SIZE,
                 [&](SimplerDeviceMallocArgs& a) {
                   a.device_ptr = 0;
                   ContextRef ref = find_context(a.ctx);
                   a.device_ptr = program_of(*ref).malloc(a.size);
                   return SIMPLER_OK;
                 });
}

int device_free(SimplerDeviceFreeArgs* args) {
  return guarded("device_free", args, SIMPLER_DEVICE_FREE_ARGS_STRUCT_SIZE,
                 [&](SimplerDeviceFreeArgs& a) {
                   ContextRef ref = find_context(a.ctx);
                   program_of(*ref).free(a.device_ptr);
                   return SIMPLER_OK;
                 });
}

int copy_to_device(SimplerCopyToDeviceArgs* args) {
  return guarded("copy_to_device", args, SIMPLER_COPY_TO_DEVICE_ARGS_STRUCT_SIZE,
                 [&](SimplerCopyToDeviceArgs& a) {
                   ContextRef ref = find_context(a.ctx);
                   require(a.src_host != nullptr || a.size == 0, "src_host is NULL");
                   program_of(*ref).copy_to(a.dst_device, a.src_host, a.size);
                   return SIMPLER_OK;
                 });
}

int copy_from_device(SimplerCopyFromDeviceArgs* args) {
  return guarded("copy_from_device", args, SIMPLER_COPY_FROM_DEVICE_ARGS_STRUCT_SIZE,
                 [&](SimplerCopyFromDeviceArgs& a) {
                   ContextRef ref = find_context(a.ctx);
                   require(a.dst_host != nullptr || a.size == 0, "dst_host is NULL");
                   program_of(*ref).copy_from(a.dst_host, a.src_device, a.size);
                   return SIMPLER_OK;
                 });
}

int device_memory_info(SimplerDeviceMemoryInfoArgs* args) {
  return guarded("device_memory_info", args, SIMPLER_DEVICE_MEMORY_INFO_ARGS_STRUCT_SIZE,
                 [&](SimplerDeviceMemoryInfoArgs& a) {
                   a.free_bytes = 0;
                   a.total_bytes = 0;
                   ContextRef ref = find_context(a.ctx);
                   program_of(*ref).memory_info(&a.free_bytes, &a.total_bytes);
                   return SIMPLER_OK;
                 });
}

// ---- kernel mode ----------------------------------------------------------------------

int kernel_mode_supported(SimplerKernelModeSupportedArgs* args) {
  return guarded("kernel_mode_supported", args, SIMPLER_KERNEL_MODE_SUPPORTED_ARGS_STRUCT_SIZE,
                 [&](SimplerKernelModeSupportedArgs& a) {
                   a.supported = false;
                   ContextRef ref = find_context(a.ctx);
                   a.supported = ref->traits.kernel_mode_supported;
                   return SIMPLER_OK;
                 });
}

int kernel_mode_init(SimplerKernelModeInitArgs* args) {
  return guarded(
      "kernel_mode_init", args, SIMPLER_KERNEL_MODE_INIT_ARGS_STRUCT_SIZE,
      [&](SimplerKernelModeInitArgs& a) {
        ContextRef ref = find_context(a.ctx);
        SimplerDeviceContext& ctx = *ref;
        // 1. Structural checks.
        require(a.device_id >= 0, "device_id is negative");
        require((a.aicpu_image == nullptr) == (a.aicpu_size == 0),
                "aicpu_image and aicpu_size must both be given or both be NULL/0");
        require((a.aicore_image == nullptr) == (a.aicore_size == 0),
                "aicore_image and aicore_size must both be given or both be NULL/0");
        require(a.config != nullptr,
                "config is NULL; pass a SimplerCallConfig (zero fields = defaults)");
        require(a.generation != 0, "generation is 0; the caller mints a nonzero generation");
        check_config(*a.config, "config");
        // Launches on the caller's stream are ordered by that stream: nothing to pipeline.
        if (a.config->pipeline_depth > 1) {
          fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
               "config.pipeline_depth: " + std::to_string(a.config->pipeline_depth) +
                   " applies to program mode only (kernel-mode launches are ordered by the "
                   "caller's stream); leave it 0 or 1");
        }
        // 2. Capability: a build without kernel mode takes nothing.
        if (!ctx.traits.kernel_mode_supported) {
          fail(PTO_RUNTIME_ERR_UNSUPPORTED, std::string("the runtime build '") + ctx.traits.name +
                                                "' does not support kernel mode");
        }
        const size_t arena_bytes = KernelLimits::arena_bytes_from_environment();
        // 3. The caller owns the device: it must already be current here (never set by us).
        const int32_t current = current_device();
        if (current < 0) {
          fail(PTO_RUNTIME_ERR_INVALID_STATE,
               "no device is current on the calling thread; make device " +
                   std::to_string(a.device_id) + " current (sim_set_device) first");
        }
        if (current != a.device_id) {
          fail(PTO_RUNTIME_ERR_INVALID_STATE,
               "device " + std::to_string(current) +
                   " is current on the calling thread, not device_id " +
                   std::to_string(a.device_id));
        }
        // 4. Mode latch, 5. one live kernel context per device.
        std::lock_guard<std::mutex> lock(ctx.init_mutex);
        refuse_second_init(ctx);
        DeviceClaim claim = DeviceClaim::try_take(ClaimKind::Kernel, a.device_id);
        if (!claim.held()) {
          fail(PTO_RUNTIME_ERR_INVALID_STATE,
               "device " + std::to_string(a.device_id) +
                   " already has a live kernel-mode context of this runtime "
                   "build; close that Worker first " SIMPLER_HOW_TO_CLOSE);
        }
        ctx.kernel =
            std::make_unique<KernelMode>(ctx.traits, a.device_id, a.generation, std::move(claim));
        ctx.mode.store(ContextMode::Kernel, std::memory_order_release);
        ctx.kernel->commit(*a.config, arena_bytes);
        return SIMPLER_OK;
      });
}

int kernel_mode_prepare_callable(SimplerKernelModePrepareCallableArgs* args) {
  return guarded("kernel_mode_prepare_callable", args,
                 SIMPLER_KERNEL_MODE_PREPARE_CALLABLE_ARGS_STRUCT_SIZE,
                 [&](SimplerKernelModePrepareCallableArgs& a) {
                   a.callable_id = -1;
                   ContextRef ref = find_context(a.ctx);
                   require(a.image != nullptr && a.size != 0,
                           "image: NULL or 0 bytes; pass the ChipCallable image");
                   a.callable_id = kernel_of(*ref).prepare(a.image, a.size);
                   return SIMPLER_OK;
                 });
}

int kernel_mode_launch(SimplerKernelModeLaunchArgs* args) {
  return guarded("kernel_mode_launch", args, SIMPLER_KERNEL_MODE_LAUNCH_ARGS_STRUCT_SIZE,
                 [&](SimplerKernelModeLaunchArgs& a) {
                   // A lease, not a reference: a launch never blocks for long (it waits
                   // at most for a prepare or finalize of this context).
                   ContextLease ref = lease_context(a.ctx);
                   require(a.args != nullptr, "args->args is NULL");
                   require(a.stream != nullptr, "stream is NULL; pass the caller's sim_stream_t");
                   if (a.callable_id < 0 || a.callable_id >= KernelLimits::kMaxCallables) {
                     fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                          "callable_id " + std::to_string(a.callable_id) + " is out of range (0.." +
                              std::to_string(KernelLimits::kMaxCallables - 1) + ")");
                   }
                   kernel_of(*ref).launch(a.callable_id, *a.args,
                                          static_cast<sim_stream_t>(a.stream));
                   return SIMPLER_OK;
                 });
}

int kernel_mode_launch_error(SimplerKernelModeLaunchErrorArgs* args) {
  return guarded("kernel_mode_launch_error", args,
                 SIMPLER_KERNEL_MODE_LAUNCH_ERROR_ARGS_STRUCT_SIZE,
                 [&](SimplerKernelModeLaunchErrorArgs& a) {
                   a.message = "";
                   ContextRef ref = find_context(a.ctx);
                   a.message = copy_to_thread_buffer(kernel_of(*ref).last_launch_error());
                   return SIMPLER_OK;
                 });
}

// ---- both modes -----------------------------------------------------------------------

int committed_device_memory(SimplerCommittedDeviceMemoryArgs* args) {
  return guarded("committed_device_memory", args, SIMPLER_COMMITTED_DEVICE_MEMORY_ARGS_STRUCT_SIZE,
                 [&](SimplerCommittedDeviceMemoryArgs& a) {
                   a.bytes = 0;
                   ContextRef ref = find_context(a.ctx);
                   switch (ref->mode.load(std::memory_order_acquire)) {
                     case ContextMode::Program:
                       a.bytes = ref->program->committed_bytes();
                       break;
                     case ContextMode::Kernel:
                       a.bytes = ref->kernel->committed_bytes();
                       break;
                     case ContextMode::Fresh:
                       break;
                   }
                   return SIMPLER_OK;
                 });
}

int finalize_device(SimplerFinalizeDeviceArgs* args) {
  return guarded("finalize_device", args, kFinalizeDeviceSize, [&](SimplerFinalizeDeviceArgs& a) {
    ContextRef ref = find_context(a.ctx);
    switch (ref->mode.load(std::memory_order_acquire)) {
      case ContextMode::Program:
        return ref->program->finalize();
      case ContextMode::Kernel:
        return ref->kernel->finalize();
      case ContextMode::Fresh:
        break;
    }
    return SIMPLER_OK;
  });
}

int abandon_context(SimplerAbandonContextArgs* args) {
  return guarded("abandon_context", args, kAbandonContextSize, [&](SimplerAbandonContextArgs& a) {
    ContextRef ref = find_context(a.ctx);
    if (ref->mode.load(std::memory_order_acquire) != ContextMode::Program) {
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           std::string("abandon_context is for program-mode contexts (this one is in ") +
               mode_name(ref->mode.load(std::memory_order_acquire)) + " mode)");
    }
    ref->program->abandon();
    return SIMPLER_OK;
  });
}

}  // namespace simpler::rt::host::abi
