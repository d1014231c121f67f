// ChipWorker, kernel mode: the caller owns the device and the stream.
#include <atomic>
#include <fstream>
#include <iterator>

#include "api_name.h"
#include "runtime_library.h"
#include "simpler/worker/chip_worker.h"

namespace simpler {
namespace {

// Context generations: nonzero, strictly increasing, unique within the process.
std::atomic<uint64_t> g_last_generation{0};

constexpr int64_t kNoCallableId = INT64_MIN;  // what prepare must overwrite on success

std::vector<uint8_t> read_optional_image(const std::string& path, const char* which) {
  if (path.empty()) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                          std::string("ChipWorker.kernel_init: cannot read the ") + which +
                              " executor image '" + path + "'");
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

uint64_t ChipWorker::last_generation() noexcept { return g_last_generation.load(); }

void ChipWorker::kernel_init(int32_t device_id, const RuntimeBins& bins, const CallConfig& config) {
  if (teardown_owed_ || (state_ != ChipWorkerState::NEW && state_ != ChipWorkerState::FAILED)) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                          teardown_owed_
                              ? "ChipWorker.kernel_init: an earlier failed init still owes its "
                                "teardown; call finalize() until it succeeds, then init again"
                              : std::string("ChipWorker.kernel_init: worker is ") +
                                    chip_worker_state_name(state_) +
                                    "; a ChipWorker initializes once (create a new one)");
  }
  const SimplerCallConfig abi_config = config.to_abi();  // validates first
  const auto aicpu = read_optional_image(bins.aicpu_image_path, "AICPU");
  const auto aicore = read_optional_image(bins.aicore_image_path, "AICore");

  bind_library_and_context(bins, /*resolve_program_entries=*/false);
  // Nothing is initialized yet: a refusal here destroys the fresh context and unloads.
  auto discard_fresh_context = [this] {
    if (destroy_context_call() != SIMPLER_OK) library_->keep_loaded();
    release_context_and_library();
  };
  bool supported = false;
  try {
    library_->require_kernel_supported();
    SimplerKernelModeSupportedArgs probe{.struct_size = sizeof probe, .ctx = ctx_};
    const int st = library_->api().kernel_mode_supported(&probe);
    if (st != SIMPLER_OK) {
      throw_status(st, "ChipWorker.kernel_init: asking the build for kernel mode failed");
    }
    supported = probe.supported;
    // The other kernel entries are required only of a build that runs kernel mode.
    if (supported) library_->require_kernel_entries();
  } catch (...) {
    discard_fresh_context();  // a missing symbol leaves the state as it was: retry allowed
    throw;
  }
  if (!supported) {
    const std::string name = bins.runtime.empty() ? library_->path() : bins.runtime;
    discard_fresh_context();
    state_ = ChipWorkerState::FAILED;
    throw UnsupportedRuntimeOperation(
        "runtime build '" + name +
        "' does not support kernel mode (kernel_mode_supported answered false); use "
        "runtime='tensormap_and_ringbuffer' or execution_mode='program'");
  }

  generation_ = g_last_generation.fetch_add(1) + 1;
  mode_ = ChipWorkerMode::KERNEL;
  device_id_ = device_id;
  init_thread_ = std::this_thread::get_id();
  SimplerKernelModeInitArgs a{.struct_size = sizeof a,
                              .ctx = ctx_,
                              .device_id = device_id,
                              .aicpu_image = aicpu.empty() ? nullptr : aicpu.data(),
                              .aicpu_size = aicpu.size(),
                              .aicore_image = aicore.empty() ? nullptr : aicore.data(),
                              .aicore_size = aicore.size(),
                              .config = &abi_config,
                              .generation = generation_};
  int st = library_->api().kernel_mode_init(&a);
  if (st != SIMPLER_OK) {
    std::string what = with_runtime_detail("ChipWorker.kernel_init on device " +
                                           std::to_string(device_id) + " failed");
    roll_back_failed_init(st);
    throw_on_status(st, what);
  }
  state_ = ChipWorkerState::INITIALIZED;
}

int64_t ChipWorker::kernel_prepare_callable(const ChipCallable& callable, const char* caller_api) {
  require_initialized(ChipWorkerMode::KERNEL, "kernel_prepare_callable");
  // The registry keeps every image handed to the runtime until a finalize succeeds.
  auto image = std::make_shared<const ChipCallable>(callable);
  kernel_images_.push_back(image);
  auto bytes = image->bytes();
  SimplerKernelModePrepareCallableArgs a{.struct_size = sizeof a,
                                         .ctx = ctx_,
                                         .image = bytes.data(),
                                         .size = bytes.size(),
                                         .callable_id = kNoCallableId};
  int st = library_->api().kernel_mode_prepare_callable(&a);
  if (st != SIMPLER_OK)
    throw_status(st, detail::api_name_or(caller_api, "ChipWorker.kernel_prepare_callable failed"));
  const int64_t id = a.callable_id;
  if (id == kNoCallableId) {
    throw ChipWorkerError(
        PTO_RUNTIME_ERR_INTERNAL,
        "ChipWorker.kernel_prepare_callable: the runtime reported success without "
        "writing a callable id");
  }
  if (id < 0) {
    throw ChipWorkerError(
        PTO_RUNTIME_ERR_INTERNAL,
        "ChipWorker.kernel_prepare_callable: the runtime reported success with the "
        "invalid callable id " +
            std::to_string(id));
  }
  return id;
}

void ChipWorker::kernel_launch(int64_t callable_id, const ChipStorageTaskArgs& args,
                               void* caller_stream, const char* api) {
  if (state_ != ChipWorkerState::INITIALIZED || mode_ != ChipWorkerMode::KERNEL) {
    require_initialized(ChipWorkerMode::KERNEL, "kernel_launch");
  }
  if (caller_stream == nullptr) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                          "ChipWorker.kernel_launch: caller_stream is null; pass the stream the "
                          "caller created on its current device");
  }
  SimplerKernelModeLaunchArgs a{.struct_size = sizeof a,
                                .ctx = ctx_,
                                .callable_id = callable_id,
                                .args = &args,
                                .stream = caller_stream};
  int st = library_->api().kernel_mode_launch(&a);
  if (st != SIMPLER_OK) {
    // One prefix: the API the user called (docs/faults.md).
    if (api == nullptr) {
      throw_status(
          st, "ChipWorker.kernel_launch(callable_id=" + std::to_string(callable_id) + ") failed");
    }
    throw_status(st, detail::api_name(api) + ": callable " + std::to_string(callable_id));
  }
}

std::string ChipWorker::kernel_launch_error() const {
  if (ctx_ == nullptr || !library_ || mode_ != ChipWorkerMode::KERNEL) return {};
  const SimplerApi& api = library_->api();
  // A build whose table predates the entry (a smaller struct_size) simply has no message.
  if (api.struct_size < SIMPLER_STRUCT_SIZE(SimplerApi, kernel_mode_launch_error) ||
      api.kernel_mode_launch_error == nullptr) {
    return {};
  }
  SimplerKernelModeLaunchErrorArgs a{.struct_size = sizeof a, .ctx = ctx_, .message = nullptr};
  if (api.kernel_mode_launch_error(&a) != SIMPLER_OK || a.message == nullptr) return {};
  return a.message;
}

bool ChipWorker::kernel_mode_supported() const noexcept {
  if (ctx_ == nullptr || !library_ || !library_->api().kernel_mode_supported) return false;
  SimplerKernelModeSupportedArgs a{.struct_size = sizeof a, .ctx = ctx_};
  return library_->api().kernel_mode_supported(&a) == SIMPLER_OK && a.supported;
}

bool ChipWorker::probe_kernel_mode_supported(const RuntimeBins& bins) {
  auto library = RuntimeLibrary::open(bins);
  // Everything the probe calls is resolved before any context exists.
  library->require_context_entries();
  library->require_kernel_supported();
  const SimplerApi& api = library->api();
  SimplerContextCreateArgs create{.struct_size = sizeof create};
  int st = api.context_create(&create);
  if (st != SIMPLER_OK || create.ctx == nullptr) {
    throw_on_status(
        st != SIMPLER_OK ? st : PTO_RUNTIME_ERR_INTERNAL,
        "ChipWorker.probe_kernel_mode_supported: context_create failed: " + library->last_error());
  }
  SimplerKernelModeSupportedArgs probe{.struct_size = sizeof probe, .ctx = create.ctx};
  const int probe_status = api.kernel_mode_supported(&probe);
  std::string probe_error = probe_status != SIMPLER_OK ? library->last_error() : "";
  const bool supported = probe_status == SIMPLER_OK && probe.supported;
  SimplerContextDestroyArgs destroy{.struct_size = sizeof destroy, .ctx = create.ctx};
  st = api.context_destroy(&destroy);
  if (st != SIMPLER_OK) {
    library->keep_loaded();  // never unload under a live context
    throw_on_status(st,
                    "ChipWorker.probe_kernel_mode_supported: destroying the probe context failed");
  }
  if (probe_status != SIMPLER_OK) {
    throw_on_status(
        probe_status,
        "ChipWorker.probe_kernel_mode_supported: kernel_mode_supported failed: " + probe_error);
  }
  return supported;  // `library` unloads here, after the context is gone
}

}  // namespace simpler
