// ChipWorker: lifecycle shared by both modes, and program mode.
#include "simpler/worker/chip_worker.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <string>

#include "api_name.h"
#include "process_guards.h"
#include "runtime_library.h"
#include "simpler/log/log.h"

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
  if (forked()) {  // the parent's context: its threads are not in this process
    library_->keep_loaded();
    return;
  }
  if (std::this_thread::get_id() == init_thread_) {
    try {
      finalize();
      return;
    } catch (const std::exception& e) {
      simpler_log(SIMPLER_LOG_LEVEL_ERROR, "worker",
                  "ChipWorker destroyed while its teardown fails (%s); leaking the context "
                  "instead of tearing it down",
                  e.what());
    }
  } else {
    simpler_log(SIMPLER_LOG_LEVEL_WARNING, "worker",
                "ChipWorker destroyed without finalize() on a thread other than its init "
                "thread; leaking its %s-mode context on device %d",
                chip_worker_mode_name(mode_), device_id_);
  }
  if (library_) library_->keep_loaded();
}

// The C ABI prefixes each message with its entry's table name ("finalize_run: ..."): one
// layer too many for a user, who called a ChipWorker/Worker method, not the entry.
static std::string without_entry_prefix(const std::string& detail) {
  size_t i = 0;
  while (i < detail.size() &&
         (std::islower(static_cast<unsigned char>(detail[i])) != 0 || detail[i] == '_')) {
    ++i;
  }
  if (i > 0 && detail.compare(i, 2, ": ") == 0) return detail.substr(i + 2);
  return detail;
}

std::string ChipWorker::with_runtime_detail(const std::string& what) const {
  std::string message = what;
  if (library_) {
    // The build's per-thread last error: the message of the call that just failed here.
    const std::string detail = without_entry_prefix(library_->last_error());
    if (!detail.empty()) message += message.empty() ? detail : ": " + detail;
  }
  return message;
}

[[noreturn]] void ChipWorker::throw_status(int status, const std::string& what_failed) const {
  const std::string message = with_runtime_detail(what_failed);
  throw_on_status(status, message.empty() ? "the call failed" : message);
  throw ChipWorkerError(status, what_failed);  // unreachable: status != 0
}

bool ChipWorker::forked() const noexcept {
  return ctx_ != nullptr && bound_fork_epoch_ != fork_epoch();
}

// A forked child has the context's memory but not its threads: a call could wait forever.
void ChipWorker::refuse_if_forked(const char* api) const {
  if (!forked()) return;
  throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                        std::string("ChipWorker.") + api +
                            ": this process is a fork of the one (pid " +
                            std::to_string(bound_pid_) +
                            ") that bound the context; a forked child must not drive or tear "
                            "it down (drop the inherited ChipWorker, which then makes no native "
                            "call, and create a new one in the child)");
}

void ChipWorker::require_initialized(ChipWorkerMode mode, const char* api) const {
  refuse_if_forked(api);
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
  library->require_context_entries();
  if (resolve_program_entries) library->require_program_entries();
  SimplerContextCreateArgs a{.struct_size = sizeof a};
  int st = library->api().context_create(&a);
  if (st != SIMPLER_OK || a.ctx == nullptr) {
    throw ChipWorkerError(
        st != SIMPLER_OK ? st : PTO_RUNTIME_ERR_INTERNAL,
        "context_create failed in '" + bins.host_lib_path + "': " + library->last_error());
  }
  library_ = std::move(library);
  ctx_ = a.ctx;
  bound_fork_epoch_ = fork_epoch();
  bound_pid_ = getpid();
}

int ChipWorker::finalize_device_call() const {
  SimplerFinalizeDeviceArgs a{.struct_size = sizeof a, .ctx = ctx_};
  return library_->api().finalize_device(&a);
}

int ChipWorker::destroy_context_call() const {
  SimplerContextDestroyArgs a{.struct_size = sizeof a, .ctx = ctx_};
  return library_->api().context_destroy(&a);
}

void ChipWorker::release_context_and_library() {
  ctx_ = nullptr;
  library_.reset();
  registered_.clear();
  signatures_.clear();
  kernel_images_.clear();
}

// A failed init: UNSUPPORTED / INVALID_ARGUMENT took nothing; any other status may have
// taken the claim, so finalize_device runs. What cannot be released is owed.
void ChipWorker::roll_back_failed_init(int init_status) {
  state_ = ChipWorkerState::FAILED;
  if (init_status != PTO_RUNTIME_ERR_UNSUPPORTED &&
      init_status != PTO_RUNTIME_ERR_INVALID_ARGUMENT) {
    if (finalize_device_call() != SIMPLER_OK) {
      teardown_owed_ = true;
      return;
    }
  }
  if (destroy_context_call() != SIMPLER_OK) {
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
  SimplerInitDeviceArgs a{.struct_size = sizeof a,
                          .ctx = ctx_,
                          .device_id = device_id,
                          .prewarm = prewarm ? &*prewarm : nullptr};
  int st = library_->api().init_device(&a);
  if (st != SIMPLER_OK) {
    std::string what =
        with_runtime_detail("ChipWorker.init on device " + std::to_string(device_id) + " failed");
    roll_back_failed_init(st);
    throw_on_status(st, what);
  }
  state_ = ChipWorkerState::INITIALIZED;
}

uint64_t mint_callable_owner() noexcept {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

int64_t ChipWorker::runtime_callable_id(CallableHandle handle, const char* api) const {
  if (handle.owner != handle_owner_) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                          std::string("ChipWorker.") + api +
                              ": the callable handle was minted by another ChipWorker; a handle "
                              "is valid only on the ChipWorker whose register() returned it");
  }
  auto it = registered_.find(handle.token);
  if (it == registered_.end()) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                          std::string("ChipWorker.") + api +
                              ": unknown callable handle (never registered here, or unregistered)");
  }
  return it->second;
}

std::vector<ArgDirection> ChipWorker::callable_signature(CallableHandle handle) const {
  // The state first: after finalize() a handle is "unknown" only because the worker closed.
  require_initialized(ChipWorkerMode::PROGRAM, "run");
  (void)runtime_callable_id(handle, "run");
  auto it = signatures_.find(handle.token);
  return it != signatures_.end() ? it->second : std::vector<ArgDirection>{};
}

CallableHandle ChipWorker::register_callable(const ChipCallable& callable, const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "register_callable");
  auto bytes = callable.bytes();
  SimplerRegisterCallableArgs a{
      .struct_size = sizeof a, .ctx = ctx_, .image = bytes.data(), .size = bytes.size()};
  int st = library_->api().register_callable(&a);
  if (st != SIMPLER_OK)
    throw_status(st, detail::api_name_or(caller_api, "ChipWorker.register_callable failed"));
  const int64_t id = a.callable_id;
  if (id < 0)
    throw ChipWorkerError(
        PTO_RUNTIME_ERR_INTERNAL,
        "ChipWorker.register_callable: runtime reported success without a callable id");
  CallableHandle handle{next_handle_token_++, handle_owner_};
  registered_.emplace(handle.token, id);
  signatures_.emplace(handle.token, callable.signature());
  return handle;
}

void ChipWorker::unregister_callable(CallableHandle handle, const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "unregister_callable");
  int64_t id = runtime_callable_id(handle, "unregister_callable");
  SimplerUnregisterCallableArgs a{.struct_size = sizeof a, .ctx = ctx_, .callable_id = id};
  int st = library_->api().unregister_callable(&a);
  if (st != SIMPLER_OK)
    throw_status(st, detail::api_name_or(caller_api, "ChipWorker.unregister_callable failed"));
  registered_.erase(handle.token);
  signatures_.erase(handle.token);
}

void ChipWorker::run(CallableHandle handle, const ChipStorageTaskArgs& args,
                     const std::optional<CallConfig>& config) {
  require_initialized(ChipWorkerMode::PROGRAM, "run");
  int64_t id = runtime_callable_id(handle, "run");
  std::optional<SimplerCallConfig> abi;
  if (config) abi = config->to_abi();
  SimplerRunArgs a{.struct_size = sizeof a,
                   .ctx = ctx_,
                   .callable_id = id,
                   .args = &args,
                   .config = abi ? &*abi : nullptr};
  int st = library_->api().run(&a);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.run");
}

uint64_t ChipWorker::submit(CallableHandle handle, const ChipStorageTaskArgs& args,
                            const std::optional<CallConfig>& config, const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "submit");
  int64_t id = runtime_callable_id(handle, "submit");
  std::optional<SimplerCallConfig> abi;
  if (config) abi = config->to_abi();
  const SimplerApi& api = library_->api();
  SimplerPrepareRunArgs prepare{.struct_size = sizeof prepare,
                                .ctx = ctx_,
                                .callable_id = id,
                                .args = &args,
                                .config = abi ? &*abi : nullptr};
  int st = api.prepare_run(&prepare);
  if (st != SIMPLER_OK) {
    // The runtime's message names the argument; one prefix, the API the caller used.
    throw_status(st,
                 detail::api_name_or(caller_api, "ChipWorker.submit: preparing the run failed"));
  }
  const uint64_t run_id = prepare.run_id;
  SimplerLaunchRunArgs launch{.struct_size = sizeof launch, .ctx = ctx_, .run_id = run_id};
  st = api.launch_run(&launch);
  if (st != SIMPLER_OK) {
    // The launch's message first: releasing the prepared run clears the thread's error.
    std::string what = with_runtime_detail(detail::api_name_or(caller_api, "ChipWorker.submit") +
                                           ": launching the run failed");
    SimplerFinalizeRunArgs release{.struct_size = sizeof release, .ctx = ctx_, .run_id = run_id};
    (void)api.finalize_run(&release);  // releases the prepared run; its status is `st`
    throw_on_status(st, what);
  }
  return run_id;
}

bool ChipWorker::poll(uint64_t run_id) {
  require_initialized(ChipWorkerMode::PROGRAM, "poll");
  SimplerPollRunArgs a{.struct_size = sizeof a, .ctx = ctx_, .run_id = run_id};
  int st = library_->api().poll_run(&a);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.poll failed");
  return a.done;
}

bool ChipWorker::wait(uint64_t run_id, std::optional<std::chrono::microseconds> timeout) {
  require_initialized(ChipWorkerMode::PROGRAM, "wait");
  int64_t us = timeout ? std::max<int64_t>(0, timeout->count()) : -1;
  SimplerWaitRunArgs a{.struct_size = sizeof a, .ctx = ctx_, .run_id = run_id, .timeout_us = us};
  return library_->api().wait_run(&a) != PTO_RUNTIME_ERR_TIMEOUT;
}

void ChipWorker::finalize_run(uint64_t run_id) {
  require_initialized(ChipWorkerMode::PROGRAM, "finalize_run");
  SimplerFinalizeRunArgs a{.struct_size = sizeof a, .ctx = ctx_, .run_id = run_id};
  int st = library_->api().finalize_run(&a);
  // The runtime's message alone: it names the kernel, the task and the core (Worker.run and
  // RunHandle.wait raise it as is).
  if (st != SIMPLER_OK) throw_status(st, "");
}

uint64_t ChipWorker::malloc(size_t size, const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "malloc");
  SimplerDeviceMallocArgs a{.struct_size = sizeof a, .ctx = ctx_, .size = size};
  int st = library_->api().device_malloc(&a);
  if (st != SIMPLER_OK) {
    throw_status(st, detail::api_name_or(caller_api,
                                         "ChipWorker.malloc(" + std::to_string(size) + ") failed"));
  }
  return a.device_ptr;
}

void ChipWorker::free(uint64_t device_ptr, const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "free");
  SimplerDeviceFreeArgs a{.struct_size = sizeof a, .ctx = ctx_, .device_ptr = device_ptr};
  int st = library_->api().device_free(&a);
  if (st != SIMPLER_OK) throw_status(st, detail::api_name_or(caller_api, "ChipWorker.free failed"));
}

void ChipWorker::copy_to(uint64_t dst_device, const void* src_host, size_t size,
                         const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "copy_to");
  SimplerCopyToDeviceArgs a{.struct_size = sizeof a,
                            .ctx = ctx_,
                            .dst_device = dst_device,
                            .src_host = src_host,
                            .size = size};
  int st = library_->api().copy_to_device(&a);
  if (st != SIMPLER_OK)
    throw_status(st, detail::api_name_or(caller_api, "ChipWorker.copy_to failed"));
}

void ChipWorker::copy_from(void* dst_host, uint64_t src_device, size_t size,
                           const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "copy_from");
  SimplerCopyFromDeviceArgs a{.struct_size = sizeof a,
                              .ctx = ctx_,
                              .dst_host = dst_host,
                              .src_device = src_device,
                              .size = size};
  int st = library_->api().copy_from_device(&a);
  if (st != SIMPLER_OK) {
    throw_status(st, detail::api_name_or(caller_api, "ChipWorker.copy_from failed"));
  }
}

DeviceMemoryInfo ChipWorker::device_memory_info(const char* caller_api) {
  require_initialized(ChipWorkerMode::PROGRAM, "device_memory_info");
  SimplerDeviceMemoryInfoArgs a{.struct_size = sizeof a, .ctx = ctx_};
  int st = library_->api().device_memory_info(&a);
  if (st != SIMPLER_OK)
    throw_status(st, detail::api_name_or(caller_api, "ChipWorker.device_memory_info failed"));
  DeviceMemoryInfo info;
  info.free_bytes = a.free_bytes;
  info.total_bytes = a.total_bytes;
  return info;
}

uint64_t ChipWorker::committed_device_memory() {
  if (ctx_ == nullptr) return 0;
  refuse_if_forked("committed_device_memory");
  SimplerCommittedDeviceMemoryArgs a{.struct_size = sizeof a, .ctx = ctx_};
  int st = library_->api().committed_device_memory(&a);
  if (st != SIMPLER_OK) throw_status(st, "ChipWorker.committed_device_memory failed");
  return a.bytes;
}

void ChipWorker::finalize() {
  if (ctx_ == nullptr) {  // nothing bound: NEW, CLOSED, or FAILED fully rolled back
    if (state_ == ChipWorkerState::INITIALIZED) state_ = ChipWorkerState::CLOSED;
    return;
  }
  refuse_if_forked("finalize");
  if (std::this_thread::get_id() != init_thread_) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                          "ChipWorker.finalize: must run on the thread that called init");
  }
  finalize_on_this_thread();
}

void ChipWorker::finalize_program_context_on_any_thread() {
  if (ctx_ == nullptr) {
    if (state_ == ChipWorkerState::INITIALIZED) state_ = ChipWorkerState::CLOSED;
    return;
  }
  if (mode_ != ChipWorkerMode::PROGRAM) {
    throw ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                          "ChipWorker: only a program-mode context may be finalized off its "
                          "init thread (kernel mode is bound to the caller's device and thread)");
  }
  finalize_on_this_thread();
}

bool ChipWorker::abandon_program_context() noexcept {
  if (ctx_ == nullptr || mode_ != ChipWorkerMode::PROGRAM) return false;
  const SimplerApi& api = library_->api();
  if (api.struct_size < SIMPLER_API_STRUCT_SIZE_2_1 || api.abandon_context == nullptr) return false;
  SimplerAbandonContextArgs a{.struct_size = sizeof a, .ctx = ctx_};
  return api.abandon_context(&a) == SIMPLER_OK;
}

void ChipWorker::finalize_on_this_thread() {
  int st = finalize_device_call();
  if (st != SIMPLER_OK)
    throw_status(st, "ChipWorker.finalize: releasing the context failed (retry finalize)");
  st = destroy_context_call();
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
