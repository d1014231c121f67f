// ChipWorker: lifecycle shared by both modes, and program mode.
#include "simpler/worker/chip_worker.h"

#include <cstdio>

#include "runtime_library.h"

namespace simpler {

const char* chip_worker_state_name(ChipWorkerState state) {
  switch (state) {
    case ChipWorkerState::NEW:
      return "NEW";
    case ChipWorkerState::INITIALIZED:
      return "INITIALIZED";
    case ChipWorkerState::CLOSED:
      return "CLOSED";
    case ChipWorkerState::FAILED:
      return "FAILED";
  }
  return "UNKNOWN";
}

const char* chip_worker_mode_name(ChipWorkerMode mode) {
  switch (mode) {
    case ChipWorkerMode::NONE:
      return "none";
    case ChipWorkerMode::PROGRAM:
      return "program";
    case ChipWorkerMode::KERNEL:
      return "kernel";
  }
  return "unknown";
}

ChipWorker::ChipWorker() = default;

ChipWorker::~ChipWorker() {
  if (ctx_ == nullptr) return;
  if (std::this_thread::get_id() == init_thread_) {
    try {
      finalize();
      return;
    } catch (const std::exception& e) {
      std::fprintf(stderr,
                   "simpler: ChipWorker destroyed while its teardown fails (%s); "
                   "leaking the context instead of tearing it down\n",
                   e.what());
    }
  } else {
    std::fprintf(stderr,
                 "simpler: ChipWorker destroyed without finalize() on a thread other "
                 "than its init thread; leaking its %s-mode context on device %d\n",
                 chip_worker_mode_name(mode_), device_id_);
  }
  if (library_) library_->keep_loaded();
}

std::string ChipWorker::with_runtime_detail(const std::string& what) const {
  std::string message = what;
  if (ctx_ && library_ && library_->entries().last_error) {
    const char* detail = nullptr;
    if (library_->entries().last_error(ctx_, &detail) == SIMPLER_OK && detail && *detail) {
      message += ": ";
      message += detail;
    }
  }
  return message;
}

[[noreturn]] void ChipWorker::throw_status(int status, const std::string& what_failed) const {
  throw_on_status(status, with_runtime_detail(what_failed));
  throw ChipWorkerError(status, what_failed);  // unreachable: status != 0
}

void ChipWorker::require_initialized(ChipWorkerMode mode, const char* api) const {
  if (state_ != ChipWorkerState::INITIALIZED) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                          std::string("ChipWorker.") + api +
                              ": requires an initialized worker (state " +
                              chip_worker_state_name(state_) + ")");
  }
  if (mode_ != mode) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                          std::string("ChipWorker.") + api + ": requires a " +
                              chip_worker_mode_name(mode) + "-mode context (this one is " +
                              chip_worker_mode_name(mode_) + " mode)");
  }
}

static void require_can_init(ChipWorkerState state, bool teardown_owed, const char* api) {
  if (teardown_owed) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                          std::string("ChipWorker.") + api +
                              ": an earlier failed init still owes its teardown; call finalize() "
                              "until it succeeds, then init again");
  }
  if (state == ChipWorkerState::NEW || state == ChipWorkerState::FAILED) return;
  throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                        std::string("ChipWorker.") + api + ": worker is " +
                            chip_worker_state_name(state) +
                            "; a ChipWorker initializes once (create a new one)");
}

// Loads the build and creates the context; on any failure nothing stays bound.
void ChipWorker::bind_library_and_context(const RuntimeBins& bins, bool resolve_program_entries) {
  auto library = RuntimeLibrary::open(bins);
  library->resolve_context_entries();
  if (resolve_program_entries) library->resolve_program_entries();
  SimplerDeviceContext* ctx = nullptr;
  int st = library->entries().create_device_context(&ctx);
  if (st != SIMPLER_OK || ctx == nullptr) {
    throw ChipWorkerError(st != SIMPLER_OK ? st : PTO_RUNTIME_ERR_INTERNAL,
                          "create_device_context failed in '" + bins.host_lib_path + "'");
  }
  library_ = std::move(library);
  ctx_ = ctx;
}

void ChipWorker::release_context_and_library() {
  ctx_ = nullptr;
  library_.reset();
  registered_.clear();
  kernel_images_.clear();
}

// A failed init: UNSUPPORTED / INVALID_ARGUMENT took nothing; any other status may have
// taken the claim, so finalize_device runs. What cannot be released is owed.
void ChipWorker::roll_back_failed_init(int init_status) {
  state_ = ChipWorkerState::FAILED;
  const auto& e = library_->entries();
  if (init_status != PTO_RUNTIME_ERR_UNSUPPORTED &&
      init_status != PTO_RUNTIME_ERR_INVALID_ARGUMENT) {
    if (e.finalize_device(ctx_) != SIMPLER_OK) {
      teardown_owed_ = true;
      return;
    }
  }
  if (e.destroy_device_context(ctx_) != SIMPLER_OK) {
    teardown_owed_ = true;
    return;
  }
  release_context_and_library();
}

void ChipWorker::init(int32_t device_id, const RuntimeBins& bins,
                      const std::optional<CallConfig>& prewarm_config) {
  require_can_init(state_, teardown_owed_, "init");
  if (device_id < 0) {
    throw ChipWorkerError(
        PTO_RUNTIME_ERR_INVALID_ARGUMENT,
        "ChipWorker.init: device_id must be >= 0 (got " + std::to_string(device_id) + ")");
  }
  std::optional<SimplerCallConfig> prewarm;
  if (prewarm_config) prewarm = prewarm_config->to_abi();  // validates first
  bind_library_and_context(bins, /*resolve_program_entries=*/true);
  mode_ = ChipWorkerMode::PROGRAM;
  device_id_ = device_id;
  init_thread_ = std::this_thread::get_id();
  int st = library_->entries().init_device(ctx_, device_id, prewarm ? &*prewarm : nullptr);
  if (st != SIMPLER_OK) {
    std::string what =
        with_runtime_detail("ChipWorker.init on device " + std::to_string(device_id) + " failed");
    roll_back_failed_init(st);
    throw_on_status(st, what);
  }
  state_ = ChipWorkerState::INITIALIZED;
}

int64_t ChipWorker::runtime_callable_id(CallableHandle handle, const char* api) const {
  auto it = registered_.find(handle.token);
  if (it == registered_.end()) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                          std::string("ChipWorker.") + api +
                              ": unknown callable handle (never registered here, or unregistered)");
  }
  return it->second;
}

CallableHandle ChipWorker::register_callable(const ChipCallable& callable) {
  require_initialized(ChipWorkerMode::PROGRAM, "register_callable");
  auto bytes = callable.bytes();
  int64_t id = -1;
  int st = library_->entries().register_callable(ctx_, bytes.data(), bytes.size(), &id);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.register_callable failed");
  if (id < 0)
    throw ChipWorkerError(
        PTO_RUNTIME_ERR_INTERNAL,
        "ChipWorker.register_callable: runtime reported success without a callable id");
  CallableHandle handle{next_handle_token_++};
  registered_.emplace(handle.token, id);
  return handle;
}

void ChipWorker::unregister_callable(CallableHandle handle) {
  require_initialized(ChipWorkerMode::PROGRAM, "unregister_callable");
  int64_t id = runtime_callable_id(handle, "unregister_callable");
  int st = library_->entries().unregister_callable(ctx_, id);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.unregister_callable failed");
  registered_.erase(handle.token);
}

void ChipWorker::run(CallableHandle handle, const ChipStorageTaskArgs& args,
                     const std::optional<CallConfig>& config) {
  require_initialized(ChipWorkerMode::PROGRAM, "run");
  int64_t id = runtime_callable_id(handle, "run");
  std::optional<SimplerCallConfig> abi;
  if (config) abi = config->to_abi();
  int st = library_->entries().run(ctx_, id, &args, abi ? &*abi : nullptr);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.run: the run failed");
}

uint64_t ChipWorker::submit(CallableHandle handle, const ChipStorageTaskArgs& args,
                            const std::optional<CallConfig>& config) {
  require_initialized(ChipWorkerMode::PROGRAM, "submit");
  int64_t id = runtime_callable_id(handle, "submit");
  std::optional<SimplerCallConfig> abi;
  if (config) abi = config->to_abi();
  const auto& e = library_->entries();
  uint64_t run_id = 0;
  int st = e.prepare_run(ctx_, id, &args, abi ? &*abi : nullptr, &run_id);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.submit: preparing the run failed");
  st = e.launch_run(ctx_, run_id);
  if (st != SIMPLER_OK) {
    (void)e.finalize_run(ctx_, run_id);  // releases the prepared run; its status is `st`
    throw_status(st, "ChipWorker.submit: launching the run failed");
  }
  return run_id;
}

bool ChipWorker::poll(uint64_t run_id) {
  require_initialized(ChipWorkerMode::PROGRAM, "poll");
  int32_t done = 0;
  int st = library_->entries().poll_run(ctx_, run_id, &done);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.poll failed");
  return done != 0;
}

bool ChipWorker::wait(uint64_t run_id, std::optional<std::chrono::microseconds> timeout) {
  require_initialized(ChipWorkerMode::PROGRAM, "wait");
  int64_t us = timeout ? std::max<int64_t>(0, timeout->count()) : -1;
  return library_->entries().wait_run(ctx_, run_id, us) != PTO_RUNTIME_ERR_TIMEOUT;
}

void ChipWorker::finalize_run(uint64_t run_id) {
  require_initialized(ChipWorkerMode::PROGRAM, "finalize_run");
  int st = library_->entries().finalize_run(ctx_, run_id);
  if (st != SIMPLER_OK) throw_status(st, "the run failed");
}

uint64_t ChipWorker::malloc(size_t size) {
  require_initialized(ChipWorkerMode::PROGRAM, "malloc");
  uint64_t ptr = 0;
  int st = library_->entries().device_malloc(ctx_, size, &ptr);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.malloc(" + std::to_string(size) + ") failed");
  return ptr;
}

void ChipWorker::free(uint64_t device_ptr) {
  require_initialized(ChipWorkerMode::PROGRAM, "free");
  int st = library_->entries().device_free(ctx_, device_ptr);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.free failed");
}

void ChipWorker::copy_to(uint64_t dst_device, const void* src_host, size_t size) {
  require_initialized(ChipWorkerMode::PROGRAM, "copy_to");
  int st = library_->entries().copy_to_device(ctx_, dst_device, src_host, size);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.copy_to failed");
}

void ChipWorker::copy_from(void* dst_host, uint64_t src_device, size_t size) {
  require_initialized(ChipWorkerMode::PROGRAM, "copy_from");
  int st = library_->entries().copy_from_device(ctx_, dst_host, src_device, size);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.copy_from failed");
}

DeviceMemoryInfo ChipWorker::device_memory_info() {
  require_initialized(ChipWorkerMode::PROGRAM, "device_memory_info");
  DeviceMemoryInfo info;
  int st = library_->entries().device_memory_info(ctx_, &info.free_bytes, &info.total_bytes);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.device_memory_info failed");
  return info;
}

uint64_t ChipWorker::committed_device_memory() {
  if (ctx_ == nullptr) return 0;
  uint64_t bytes = 0;
  int st = library_->entries().committed_device_memory(ctx_, &bytes);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.committed_device_memory failed");
  return bytes;
}

void ChipWorker::finalize() {
  if (ctx_ == nullptr) {  // nothing bound: NEW, CLOSED, or FAILED fully rolled back
    if (state_ == ChipWorkerState::INITIALIZED) state_ = ChipWorkerState::CLOSED;
    return;
  }
  if (std::this_thread::get_id() != init_thread_) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                          "ChipWorker.finalize: must run on the thread that called init");
  }
  const auto& e = library_->entries();
  int st = e.finalize_device(ctx_);
  if (st != SIMPLER_OK)
    throw_status(st, "ChipWorker.finalize: releasing the context failed (retry finalize)");
  st = e.destroy_device_context(ctx_);
  if (st != SIMPLER_OK)
    throw_status(st, "ChipWorker.finalize: destroying the context failed (retry finalize)");
  release_context_and_library();
  if (teardown_owed_) {
    teardown_owed_ = false;  // stays FAILED: a new init may be tried
  } else {
    state_ = ChipWorkerState::CLOSED;
  }
}

}  // namespace simpler
