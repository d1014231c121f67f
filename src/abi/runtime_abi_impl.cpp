#include "abi/runtime_abi_impl.h"

#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "abi/abi_error.h"
#include "abi/context.h"
#include "abi/driver.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt::host::abi {
namespace {

void record(SimplerDeviceContext* ctx, const char* entry, const char* message) {
  if (ctx == nullptr) return;
  try {
    ctx->errors.set(std::string(entry) + ": " + message);
  } catch (...) {
    // Out of host memory while recording: the status still tells what happened.
  }
}

// The boundary: runs fn, turns every exception into a status and the context's last error.
template <typename Fn>
int guarded(SimplerDeviceContext* ctx, const char* entry, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const AbiError& e) {
    record(ctx, entry, e.what());
    return e.status();
  } catch (const TaskInterfaceError& e) {
    record(ctx, entry, e.what());
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    record(ctx, entry, "out of host memory");
    return PTO_RUNTIME_ERR_INTERNAL;
  } catch (const std::exception& e) {
    record(ctx, entry, e.what());
    return PTO_RUNTIME_ERR_INTERNAL;
  } catch (...) {
    record(ctx, entry, "unknown exception");
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

ProgramMode& program_of(SimplerDeviceContext* ctx) {
  switch (ctx->mode.load(std::memory_order_acquire)) {
    case ContextMode::Program:
      return *ctx->program;
    case ContextMode::Kernel:
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "this is a kernel-mode context; program-mode entries are refused");
    case ContextMode::Fresh:
      break;
  }
  fail(PTO_RUNTIME_ERR_INVALID_STATE,
       "the context is not initialized; call simpler_init_device first");
}

KernelMode& kernel_of(SimplerDeviceContext* ctx) {
  switch (ctx->mode.load(std::memory_order_acquire)) {
    case ContextMode::Kernel:
      return *ctx->kernel;
    case ContextMode::Program:
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "this is a program-mode context; kernel-mode entries are refused");
    case ContextMode::Fresh:
      break;
  }
  fail(PTO_RUNTIME_ERR_INVALID_STATE,
       ctx->traits.kernel_mode_supported
           ? "the context is not a kernel-mode context; call simpler_kernel_mode_init first"
           : "the context is not a kernel-mode context (this runtime build has no kernel mode)");
}

const char* mode_name(ContextMode mode) {
  return mode == ContextMode::Program ? "program" : mode == ContextMode::Kernel ? "kernel" : "no";
}

void refuse_second_init(SimplerDeviceContext* ctx) {
  ContextMode mode = ctx->mode.load(std::memory_order_acquire);
  if (mode != ContextMode::Fresh) {
    fail(PTO_RUNTIME_ERR_INVALID_STATE,
         std::string("the context is latched to ") + mode_name(mode) +
             " mode for life; create a new context for another init");
  }
}

}  // namespace

int runtime_abi_version(uint32_t* out_version) {
  if (out_version == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  *out_version = SIMPLER_RUNTIME_ABI_VERSION;
  return SIMPLER_OK;
}

int runtime_name(const BuildTraits& traits, const char** out_name) {
  if (out_name == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  *out_name = traits.name;
  return SIMPLER_OK;
}

int create_context(const BuildTraits& traits, SimplerDeviceContext** out_ctx) {
  if (out_ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  *out_ctx = nullptr;
  return guarded(nullptr, "create_device_context", [&] {
    *out_ctx = new SimplerDeviceContext(traits);
    return SIMPLER_OK;
  });
}

int destroy_context(SimplerDeviceContext* ctx) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "destroy_device_context", [&] {
    {
      std::lock_guard<std::mutex> lock(ctx->init_mutex);
      const bool holds = (ctx->program && ctx->program->holds_resources()) ||
                         (ctx->kernel && ctx->kernel->holds_resources());
      if (holds) {
        fail(PTO_RUNTIME_ERR_INVALID_STATE,
             "the context still holds device resources; call finalize_device first (the context is "
             "unchanged and still usable)");
      }
    }
    delete ctx;
    return SIMPLER_OK;
  });
}

int last_error(SimplerDeviceContext* ctx, const char** out_message) {
  if (ctx == nullptr || out_message == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  // Per thread, trivially destructible: valid until this thread's next call.
  thread_local char buffer[2048];
  return guarded(ctx, "simpler_last_error", [&] {
    const std::string message = ctx->errors.get();
    const size_t n = std::min(message.size(), sizeof(buffer) - 1);
    std::memcpy(buffer, message.data(), n);
    buffer[n] = '\0';
    *out_message = buffer;
    return SIMPLER_OK;
  });
}

// ---- program mode ---------------------------------------------------------------------

int init_device(SimplerDeviceContext* ctx, int32_t device_id, const SimplerCallConfig* prewarm) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_init_device", [&] {
    int32_t count = 0;
    check_driver(sim_get_device_count(&count), "counting devices");
    if (device_id < 0 || device_id >= count) {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "device_id " + std::to_string(device_id) +
                                                 " is out of range (" + std::to_string(count) +
                                                 " devices)");
    }
    if (prewarm != nullptr) check_config(*prewarm, "prewarm");
    std::lock_guard<std::mutex> lock(ctx->init_mutex);
    refuse_second_init(ctx);
    DeviceClaim claim = DeviceClaim::try_take(ClaimKind::Program, device_id);
    if (!claim.held()) {
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "device " + std::to_string(device_id) +
               " is already owned by another program-mode context of this "
               "runtime build; finalize that one first");
    }
    ctx->program =
        std::make_unique<ProgramMode>(ctx->traits, device_id, ctx->errors, std::move(claim));
    ctx->mode.store(ContextMode::Program, std::memory_order_release);
    ctx->program->open(prewarm);
    return SIMPLER_OK;
  });
}

int register_callable(SimplerDeviceContext* ctx, const void* image, size_t size, int64_t* out_id) {
  if (out_id != nullptr) *out_id = -1;
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_register_callable", [&] {
    require(out_id != nullptr, "out_callable_id is NULL");
    require(image != nullptr && size != 0, "image: NULL or 0 bytes; pass the ChipCallable image");
    *out_id = program_of(ctx).register_callable(image, size);
    return SIMPLER_OK;
  });
}

int unregister_callable(SimplerDeviceContext* ctx, int64_t callable_id) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_unregister_callable", [&] {
    program_of(ctx).unregister_callable(callable_id);
    return SIMPLER_OK;
  });
}

int prepare_run(SimplerDeviceContext* ctx, int64_t callable_id, const ChipStorageTaskArgs* args,
                const SimplerCallConfig* config, uint64_t* out_run_id) {
  if (out_run_id != nullptr) *out_run_id = 0;
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_prepare_run", [&] {
    require(args != nullptr, "args is NULL");
    require(out_run_id != nullptr, "out_run_id is NULL");
    *out_run_id = program_of(ctx).prepare_run(callable_id, *args, config);
    return SIMPLER_OK;
  });
}

int launch_run(SimplerDeviceContext* ctx, uint64_t run_id) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_launch_run", [&] {
    program_of(ctx).launch_run(run_id);
    return SIMPLER_OK;
  });
}

int poll_run(SimplerDeviceContext* ctx, uint64_t run_id, int32_t* out_done) {
  if (out_done != nullptr) *out_done = 0;
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_poll_run", [&] {
    require(out_done != nullptr, "out_done is NULL");
    *out_done = program_of(ctx).poll_run(run_id) ? 1 : 0;
    return SIMPLER_OK;
  });
}

int wait_run(SimplerDeviceContext* ctx, uint64_t run_id, int64_t timeout_us) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_wait_run",
                 [&] { return program_of(ctx).wait_run(run_id, timeout_us); });
}

int finalize_run(SimplerDeviceContext* ctx, uint64_t run_id) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_finalize_run", [&] { return program_of(ctx).finalize_run(run_id); });
}

int run(SimplerDeviceContext* ctx, int64_t callable_id, const ChipStorageTaskArgs* args,
        const SimplerCallConfig* config) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_run", [&] {
    require(args != nullptr, "args is NULL");
    ProgramMode& program = program_of(ctx);
    const uint64_t run_id = program.prepare_run(callable_id, *args, config);
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

int device_malloc(SimplerDeviceContext* ctx, size_t size, uint64_t* out_device_ptr) {
  if (out_device_ptr != nullptr) *out_device_ptr = 0;
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_device_malloc", [&] {
    require(out_device_ptr != nullptr, "out_device_ptr is NULL");
    *out_device_ptr = program_of(ctx).malloc(size);
    return SIMPLER_OK;
  });
}

int device_free(SimplerDeviceContext* ctx, uint64_t device_ptr) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_device_free", [&] {
    program_of(ctx).free(device_ptr);
    return SIMPLER_OK;
  });
}

int copy_to_device(SimplerDeviceContext* ctx, uint64_t dst_device, const void* src_host,
                   size_t size) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_copy_to_device", [&] {
    require(src_host != nullptr || size == 0, "src_host is NULL");
    program_of(ctx).copy_to(dst_device, src_host, size);
    return SIMPLER_OK;
  });
}

int copy_from_device(SimplerDeviceContext* ctx, void* dst_host, uint64_t src_device, size_t size) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_copy_from_device", [&] {
    require(dst_host != nullptr || size == 0, "dst_host is NULL");
    program_of(ctx).copy_from(dst_host, src_device, size);
    return SIMPLER_OK;
  });
}

int device_memory_info(SimplerDeviceContext* ctx, uint64_t* out_free, uint64_t* out_total) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_device_memory_info", [&] {
    require(out_free != nullptr && out_total != nullptr, "out_free / out_total is NULL");
    program_of(ctx).memory_info(out_free, out_total);
    return SIMPLER_OK;
  });
}

// ---- kernel mode ----------------------------------------------------------------------

int kernel_mode_supported(SimplerDeviceContext* ctx) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return ctx->traits.kernel_mode_supported ? 1 : 0;
}

int kernel_mode_init(SimplerDeviceContext* ctx, int32_t device_id, const void* aicpu_image,
                     size_t aicpu_size, const void* aicore_image, size_t aicore_size,
                     const SimplerCallConfig* config, uint64_t generation) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_kernel_mode_init", [&] {
    // 1. Structural checks.
    require(device_id >= 0, "device_id is negative");
    require((aicpu_image == nullptr) == (aicpu_size == 0),
            "aicpu_image and aicpu_size must both be given or both be NULL/0");
    require((aicore_image == nullptr) == (aicore_size == 0),
            "aicore_image and aicore_size must both be given or both be NULL/0");
    require(config != nullptr, "config is NULL; pass a SimplerCallConfig (zero fields = defaults)");
    require(generation != 0, "generation is 0; the caller mints a nonzero generation");
    check_config(*config, "config");
    // 2. Capability: a build without kernel mode takes nothing.
    if (!ctx->traits.kernel_mode_supported) {
      fail(PTO_RUNTIME_ERR_UNSUPPORTED, std::string("the runtime build '") + ctx->traits.name +
                                            "' does not support kernel mode");
    }
    const size_t arena_bytes = KernelLimits::arena_bytes_from_environment();
    // 3. The caller owns the device: it must already be current here (never set by us).
    const int32_t current = current_device();
    if (current < 0) {
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "no device is current on the calling thread; make device " + std::to_string(device_id) +
               " current (sim_set_device) first");
    }
    if (current != device_id) {
      fail(PTO_RUNTIME_ERR_INVALID_STATE, "device " + std::to_string(current) +
                                              " is current on the calling thread, not device_id " +
                                              std::to_string(device_id));
    }
    // 4. Mode latch, 5. one live kernel context per device.
    std::lock_guard<std::mutex> lock(ctx->init_mutex);
    refuse_second_init(ctx);
    DeviceClaim claim = DeviceClaim::try_take(ClaimKind::Kernel, device_id);
    if (!claim.held()) {
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "device " + std::to_string(device_id) +
               " already has a live kernel-mode context of this runtime "
               "build; finalize that one first");
    }
    ctx->kernel = std::make_unique<KernelMode>(ctx->traits, device_id, generation, ctx->errors,
                                               std::move(claim));
    ctx->mode.store(ContextMode::Kernel, std::memory_order_release);
    ctx->kernel->commit(*config, arena_bytes);
    return SIMPLER_OK;
  });
}

int kernel_mode_prepare_callable(SimplerDeviceContext* ctx, const void* image, size_t size,
                                 int64_t* out_callable_id) {
  if (out_callable_id != nullptr) *out_callable_id = -1;
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_kernel_mode_prepare_callable", [&] {
    require(out_callable_id != nullptr, "out_callable_id is NULL");
    require(image != nullptr && size != 0, "image: NULL or 0 bytes; pass the ChipCallable image");
    *out_callable_id = kernel_of(ctx).prepare(image, size);
    return SIMPLER_OK;
  });
}

int kernel_mode_launch(SimplerDeviceContext* ctx, int64_t callable_id,
                       const ChipStorageTaskArgs* args, void* stream) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_kernel_mode_launch", [&] {
    require(args != nullptr, "args is NULL");
    require(stream != nullptr, "stream is NULL; pass the caller's sim_stream_t");
    if (callable_id < 0 || callable_id >= KernelLimits::kMaxCallables) {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
           "callable_id " + std::to_string(callable_id) + " is out of range (0.." +
               std::to_string(KernelLimits::kMaxCallables - 1) + ")");
    }
    kernel_of(ctx).launch(callable_id, *args, static_cast<sim_stream_t>(stream));
    return SIMPLER_OK;
  });
}

// ---- both modes -----------------------------------------------------------------------

int committed_device_memory(SimplerDeviceContext* ctx, uint64_t* out_bytes) {
  if (out_bytes != nullptr) *out_bytes = 0;
  if (ctx == nullptr || out_bytes == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "simpler_committed_device_memory", [&] {
    switch (ctx->mode.load(std::memory_order_acquire)) {
      case ContextMode::Program:
        *out_bytes = ctx->program->committed_bytes();
        break;
      case ContextMode::Kernel:
        *out_bytes = ctx->kernel->committed_bytes();
        break;
      case ContextMode::Fresh:
        break;
    }
    return SIMPLER_OK;
  });
}

int finalize_device(SimplerDeviceContext* ctx) {
  if (ctx == nullptr) return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  return guarded(ctx, "finalize_device", [&] {
    switch (ctx->mode.load(std::memory_order_acquire)) {
      case ContextMode::Program:
        return ctx->program->finalize();
      case ContextMode::Kernel:
        return ctx->kernel->finalize();
      case ContextMode::Fresh:
        break;
    }
    return SIMPLER_OK;
  });
}

}  // namespace simpler::rt::host::abi
