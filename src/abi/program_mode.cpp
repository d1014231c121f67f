#include "abi/program_mode.h"

#include <string>
#include <utility>

#include "abi/abi_error.h"
#include "abi/arg_check.h"
#include "engine/tensor_shape.h"
#include "simpler/abi/status.h"

namespace simpler::rt::host {

// The device job's handle keeps the run alive until its cleanup ran. The ProgramMode
// outlives every launched job (finalize waits for them).
struct ProgramMode::JobHandle {
  std::shared_ptr<ProgramRun> run;
  ProgramMode* owner;
};

namespace {

SimplerCallConfig default_config() {
  SimplerCallConfig c{};
  c.struct_size = sizeof(SimplerCallConfig);
  return c;
}

// A nonzero ring field of `wanted` that differs from what the engine was built with.
bool rings_differ(const SimplerCallConfig& wanted, const SimplerCallConfig& built) {
  auto differs = [](auto w, auto b) { return w != 0 && w != b; };
  return differs(wanted.aicpu_thread_num, built.aicpu_thread_num) ||
         differs(wanted.task_window_size, built.task_window_size) ||
         differs(wanted.heap_ring_bytes, built.heap_ring_bytes) ||
         differs(wanted.dep_pool_size, built.dep_pool_size) ||
         differs(wanted.tensormap_capacity, built.tensormap_capacity);
}

std::string run_name(uint64_t run_id) { return "run " + std::to_string(run_id); }

// run->mutex held.
std::string run_failure(const ProgramRun& run) {
  return run.error.empty() ? std::string("the run failed with ") + simpler_status_name(run.status)
                           : run.error;
}

}  // namespace

ProgramMode::ProgramMode(const BuildTraits& traits, int32_t device, DeviceClaim claim)
    : traits_(traits), device_(device), claim_(std::move(claim)) {}

ProgramMode::~ProgramMode() = default;

void ProgramMode::open(const SimplerCallConfig* prewarm) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    // The runtime owns the device: it becomes (and stays) current on the init thread.
    check_driver(sim_set_device(device_), "making device " + std::to_string(device_) + " current");
    epoch_ = DeviceEpoch::of(device_);
    check_driver(sim_stream_create(&stream_), "creating the context's stream");
    if (prewarm != nullptr) ensure_engine(prewarm, /*for_all_runs=*/true);
    phase_ = Phase::Open;
  } catch (const AbiError& e) {
    phase_ = Phase::Closing;
    try {
      (void)release_all();
    } catch (const AbiError&) {
      // What could not be released stays for finalize_device.
    }
    const bool structural =
        e.status() == PTO_RUNTIME_ERR_INVALID_ARGUMENT || e.status() == PTO_RUNTIME_ERR_UNSUPPORTED;
    if (structural && holds_resources_locked()) fail(PTO_RUNTIME_ERR_INTERNAL, e.what());
    throw;
  }
}

void ProgramMode::require_open() const {
  switch (phase_) {
    case Phase::Open:
      if (epoch_.reset_since()) {
        fail(PTO_RUNTIME_ERR_INVALID_STATE,
             "device " + std::to_string(device_) +
                 " was reset (sim_device_reset) while this context used it: its stream and "
                 "memory are gone; close the Worker " SIMPLER_HOW_TO_CLOSE " and create a new one");
      }
      return;
    case Phase::Opening:
      fail(PTO_RUNTIME_ERR_INVALID_STATE, "the program-mode init of this context did not complete");
    case Phase::Closing:
      fail(PTO_RUNTIME_ERR_INVALID_STATE, "finalize_device has started on this context");
    case Phase::Closed:
      fail(PTO_RUNTIME_ERR_INVALID_STATE, "the context was finalized; create a new context");
    case Phase::Abandoned:
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "the context was abandoned (a run was still running after the host's grace "
           "period); create a new context");
  }
}

void ProgramMode::require_healthy() const {
  if (!engine_) return;
  std::string why;
  const int sticky = engine_->sticky_error(&why);
  if (sticky != SIMPLER_OK) {
    fail(sticky, "the context failed earlier (" + why + "); only close() is allowed now");
  }
}

void ProgramMode::leak_programs_of_abandoned_engine() {
  if (!engine_ || !engine_->abandoned()) return;
  // A thread of the engine may still run code of any of these programs: they stay loaded
  // for the life of the process (their device-side bytes may go).
  for (auto& [id, callable] : callables_) {
    (void)new std::shared_ptr<const LoadedProgram>(callable->resident.program);  // NOLINT: leaked
  }
}

Engine* ProgramMode::ensure_engine(const SimplerCallConfig* config, bool for_all_runs) {
  if (engine_ && (config == nullptr || !rings_differ(*config, engine_config_)))
    return engine_.get();
  if (engine_ && !runs_.empty()) {
    fail(PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE,
         "the config asks for other ring sizes than the engine in use, which is still used "
         "by " +
             counted(runs_.size(), "prepared run") +
             "; finalize them first (or prewarm with the sizes you need)");
  }
  SimplerCallConfig wanted = config != nullptr ? *config : default_config();
  // A run's own watchdog is that run's (execute() gets its config); only a prewarm
  // config's watchdog applies to every run of the context.
  if (!for_all_runs) {
    wanted.watchdog_timeout_ms = 0;
    wanted.pipeline_depth = 0;  // likewise: a run's depth is that run's
  }
  ScopedDevice on_device(device_);
  if (engine_) {  // ring memory of the old engine goes first
    std::string error;
    check_driver(engine_->release(&error), "releasing the engine to resize its rings: " + error);
    engine_.reset();
  }
  EngineOptions options;
  options.device = device_;
  options.config = wanted;
  options.build_graph_first = traits_.build_graph_first;
  std::string error;
  std::unique_ptr<Engine> engine;
  int status = Engine::create(options, &engine, &error);
  if (status != SIMPLER_OK) fail(status, "creating the engine failed: " + error);
  if (!engine) fail(PTO_RUNTIME_ERR_INTERNAL, "Engine::create reported success without an engine");
  engine_ = std::move(engine);
  engine_config_ = wanted;
  return engine_.get();
}

int64_t ProgramMode::register_callable(const void* image, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  require_healthy();
  (void)parse_callable(image, size);  // full walk of the caller's bytes first
  ScopedDevice on_device(device_);
  auto callable = std::make_unique<ProgramCallable>();
  callable->code = DeviceAllocation::allocate(size, "a callable image");
  check_driver(sim_memcpy(callable->code.data(), image, size, SIM_MEMCPY_HOST_TO_DEVICE),
               "uploading a callable image");
  callable->resident = make_resident(callable->code.data(), size);
  const int64_t id = next_callable_id_++;
  callables_.emplace(id, std::move(callable));
  return id;
}

void ProgramMode::unregister_callable(int64_t callable_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  auto it = callables_.find(callable_id);
  if (it == callables_.end()) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         "callable id " + std::to_string(callable_id) + " is not registered");
  }
  if (it->second->runs_using != 0) {
    fail(PTO_RUNTIME_ERR_INVALID_STATE, "callable " + std::to_string(callable_id) + " is used by " +
                                            counted(it->second->runs_using, "prepared run") +
                                            "; finalize them first");
  }
  std::unique_ptr<ProgramCallable> callable = std::move(it->second);
  callables_.erase(it);
  callable->resident = ResidentCallable{};  // unload before its bytes go
  ScopedDevice on_device(device_);
  int status = callable->code.release();
  if (status != SIMPLER_OK) {
    leftover_blocks_.push_back(std::move(callable->code));
    check_driver(status, "freeing the unregistered callable's code (kept for finalize_device)");
  }
}

std::shared_ptr<ProgramRun> ProgramMode::find_run(uint64_t run_id) const {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         run_name(run_id) + " is not a prepared run of this context");
  }
  return it->second;
}

uint64_t ProgramMode::prepare_run(int64_t callable_id, const ChipStorageTaskArgs& args,
                                  const SimplerCallConfig* config) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  require_healthy();
  auto it = callables_.find(callable_id);
  if (it == callables_.end()) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         "callable id " + std::to_string(callable_id) + " is not registered");
  }
  if (config != nullptr) {
    std::string why = validate_call_config(*config);
    if (!why.empty()) fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "config: " + why);
  }
  ProgramCallable& callable = *it->second;
  check_call_args(args, callable.resident.signature, device_, /*allow_host=*/true,
                  callable.resident.typed);

  auto run = std::make_shared<ProgramRun>();
  run->engine = ensure_engine(config, /*for_all_runs=*/false);
  run->callable_id = callable_id;
  run->callable = &callable;
  run->device_args = args;
  if (config != nullptr) {
    run->config = *config;
    run->has_config = true;
  }
  {
    ScopedDevice on_device(device_);
    run->staging.stage(run->device_args, callable.resident.signature);
  }
  run->id = next_run_id_++;
  ++callable.runs_using;
  runs_.emplace(run->id, run);
  return run->id;
}

int ProgramMode::run_job(void* p) {
  const std::shared_ptr<ProgramRun>& shared = static_cast<JobHandle*>(p)->run;
  ProgramRun& run = *shared;
  std::string error;
  // A pipelined run (pipeline_depth > 1) returns once its orchestration did, so the next
  // run's job can start orchestrating; the callback completes it when its tasks finished
  // (it keeps the run alive until then).
  RunDone on_done = [keep = shared](int status, const std::string& message) {
    bool notify = false;
    {
      std::lock_guard<std::mutex> lock(keep->mutex);
      keep->status = status;
      keep->error = message;
      keep->completed = true;
      notify = keep->settle();
    }
    if (notify) keep->finished.notify_all();  // `keep` holds the run
  };
  bool deferred = false;
  const bool next_follows =
      static_cast<JobHandle*>(p)->owner->jobs_queued_.fetch_sub(1, std::memory_order_acq_rel) > 1;
  int status = run.engine->execute(*run.callable->resident.program, run.device_args,
                                   run.has_config ? &run.config : nullptr, &error,
                                   std::move(on_done), &deferred, next_follows);
  std::lock_guard<std::mutex> lock(run.mutex);
  run.executed = true;
  if (!deferred) {
    run.status = status;
    run.error = std::move(error);
    run.completed = true;
  }
  return SIMPLER_OK;  // the status belongs to the run, not to the context's stream
}

void ProgramMode::finish_job(void* p) {
  std::unique_ptr<JobHandle> handle(static_cast<JobHandle*>(p));
  ProgramRun& run = *handle->run;  // `handle` holds the run until the notify below
  std::unique_lock<std::mutex> lock(run.mutex);
  if (!run.executed) {
    handle->owner->jobs_queued_.fetch_sub(1, std::memory_order_acq_rel);  // never started
    // Only the driver fails our jobs (they return 0): the stream is sticky from now on.
    handle->owner->stream_failed_.store(true, std::memory_order_release);
    run.status = SIMPLER_CHIP_ERR_DEVICE_FAULT;
    run.error = "the run's device job was skipped by an earlier error on the context's stream";
    run.completed = true;
  }
  run.job_finished = true;
  const bool notify = run.settle();
  lock.unlock();
  if (notify) run.finished.notify_all();
}

void ProgramMode::renew_stream_after_error() {
  // A run whose job the driver skipped left the stream with a sticky error; later runs
  // get a fresh stream (destroy waits for what is still queued on the old one).
  if (stream_ != nullptr && !stream_failed_.load(std::memory_order_acquire)) return;
  if (stream_ != nullptr) {
    check_driver(sim_stream_destroy(stream_), "replacing the context's failed stream");
    stream_ = nullptr;
    stream_failed_.store(false, std::memory_order_relaxed);
  }
  ScopedDevice on_device(device_);
  check_driver(sim_stream_create(&stream_), "replacing the context's failed stream");
}

void ProgramMode::launch_run(uint64_t run_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  require_healthy();
  std::shared_ptr<ProgramRun> run = find_run(run_id);
  if (run->launched)
    fail(PTO_RUNTIME_ERR_INVALID_STATE, run_name(run_id) + " was already launched");
  if (run->finalizing)
    fail(PTO_RUNTIME_ERR_INVALID_STATE, run_name(run_id) + " is being finalized");
  renew_stream_after_error();
  auto handle = std::make_unique<JobHandle>(JobHandle{run, this});
  jobs_queued_.fetch_add(1, std::memory_order_acq_rel);
  const int launched =
      sim_launch_device_job(stream_, &ProgramMode::run_job, handle.get(), &ProgramMode::finish_job);
  if (launched != SIMPLER_OK) jobs_queued_.fetch_sub(1, std::memory_order_acq_rel);
  check_driver(launched, "enqueueing " + run_name(run_id));
  (void)handle.release();  // owned by the job's cleanup now
  run->launched = true;
}

bool ProgramMode::poll_run(uint64_t run_id) {
  std::shared_ptr<ProgramRun> run;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    run = find_run(run_id);
    if (!run->launched)
      fail(PTO_RUNTIME_ERR_INVALID_STATE, run_name(run_id) + " has not been launched");
  }
  std::lock_guard<std::mutex> lock(run->mutex);
  return run->done;
}

int ProgramMode::wait_run(uint64_t run_id, int64_t timeout_us) {
  std::shared_ptr<ProgramRun> run;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    run = find_run(run_id);
    if (!run->launched)
      fail(PTO_RUNTIME_ERR_INVALID_STATE, run_name(run_id) + " has not been launched");
  }
  if (!run->wait_done(timeout_us)) {
    fail(PTO_RUNTIME_ERR_TIMEOUT, run_name(run_id) + " did not finish within " +
                                      std::to_string(timeout_us) +
                                      " us; it keeps running (wait again or finalize it)");
  }
  std::lock_guard<std::mutex> lock(run->mutex);
  // The engine's message names the task and kernel; the status name is added once, by the
  // caller (ChipWorkerError), not at every layer.
  if (run->status != SIMPLER_OK) fail(run->status, run_failure(*run));
  return SIMPLER_OK;
}

int ProgramMode::finalize_run(uint64_t run_id) {
  std::shared_ptr<ProgramRun> run;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    run = find_run(run_id);
    if (run->finalizing)
      fail(PTO_RUNTIME_ERR_INVALID_STATE, run_name(run_id) + " is already being finalized");
    run->finalizing = true;
  }
  if (run->launched) (void)run->wait_done(-1);

  std::lock_guard<std::mutex> lock(mutex_);
  auto it = runs_.find(run_id);
  if (it == runs_.end() || it->second != run) {
    fail(PTO_RUNTIME_ERR_INVALID_STATE,
         run_name(run_id) + " was released by finalize_device meanwhile");
  }
  int status = SIMPLER_OK;
  std::string message;
  if (run->launched) {
    std::lock_guard<std::mutex> run_lock(run->mutex);
    status = run->status;
    if (status != SIMPLER_OK) message = run_failure(*run);
  }
  ScopedDevice on_device(device_);
  if (run->launched && status == SIMPLER_OK) {
    try {
      run->staging.copy_back();  // outputs of a failed run are not copied back
    } catch (const AbiError& e) {
      status = e.status();
      message = run_name(run_id) + ": " + e.what();
    }
  }
  if (run->launched && run->engine->abandoned()) {
    // A stuck kernel of this run may still write its staged copies: never reused.
    (void)new Staging(std::move(run->staging));  // NOLINT: leaked on purpose
  }
  const int release_status = run->staging.release();
  if (release_status != SIMPLER_OK) {
    leftover_staging_.push_back(std::move(run->staging));
    if (status == SIMPLER_OK) {
      status = map_driver_status(release_status);
      message = run_name(run_id) +
                ": freeing its staging failed: " + simpler_status_name(release_status) +
                " (kept for finalize_device)";
    }
  }
  --run->callable->runs_using;
  runs_.erase(it);
  if (status != SIMPLER_OK) fail(status, message);
  return SIMPLER_OK;
}

void ProgramMode::check_device_range(uint64_t device_ptr, size_t size, const char* what) const {
  int32_t owner = -1;
  int status = sim_pointer_device(reinterpret_cast<const void*>(device_ptr), size, &owner);
  if (status != SIMPLER_OK) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         std::string(what) + ": [" + std::to_string(device_ptr) + ", +" + std::to_string(size) +
             ") is not inside one live device allocation (" + simpler_status_name(status) + ")");
  }
  if (owner != device_) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         std::string(what) + ": the pointer is memory of device " + std::to_string(owner) +
             ", the context owns device " + std::to_string(device_));
  }
}

uint64_t ProgramMode::malloc(size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  require_healthy();
  if (size == 0) fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "size: 0 bytes; ask for at least 1 byte");
  ScopedDevice on_device(device_);
  DeviceAllocation block = DeviceAllocation::allocate(size, "the caller's malloc");
  const uint64_t address = block.address();
  allocations_.emplace(address, std::move(block));
  return address;
}

void ProgramMode::free(uint64_t device_ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  auto it = allocations_.find(device_ptr);
  if (it == allocations_.end()) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         "device_ptr " + std::to_string(device_ptr) +
             " is not an allocation of this context (foreign, interior or already freed)");
  }
  ScopedDevice on_device(device_);
  check_driver(it->second.release(), "freeing device memory");
  allocations_.erase(it);
}

void ProgramMode::copy_to(uint64_t dst_device, const void* src_host, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  require_healthy();
  if (size == 0) return;
  if (src_host == nullptr) fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "src_host is NULL");
  check_device_range(dst_device, size, "dst_device");
  ScopedDevice on_device(device_);
  check_driver(
      sim_memcpy(reinterpret_cast<void*>(dst_device), src_host, size, SIM_MEMCPY_HOST_TO_DEVICE),
      "copying to the device");
}

void ProgramMode::copy_from(void* dst_host, uint64_t src_device, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  require_healthy();
  if (size == 0) return;
  if (dst_host == nullptr) fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, "dst_host is NULL");
  check_device_range(src_device, size, "src_device");
  ScopedDevice on_device(device_);
  check_driver(sim_memcpy(dst_host, reinterpret_cast<const void*>(src_device), size,
                          SIM_MEMCPY_DEVICE_TO_HOST),
               "copying from the device");
}

void ProgramMode::memory_info(uint64_t* out_free, uint64_t* out_total) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_open();
  ScopedDevice on_device(device_);
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  check_driver(sim_mem_get_info(&free_bytes, &total_bytes), "querying device memory");
  *out_free = free_bytes;
  *out_total = total_bytes;
}

uint64_t ProgramMode::committed_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t bytes = engine_ ? engine_->committed_bytes() : 0;
  for (const auto& [id, callable] : callables_) bytes += callable->code.size();
  for (const auto& [id, run] : runs_) bytes += run->staging.bytes();
  for (const auto& [address, block] : allocations_) bytes += block.size();
  for (const Staging& s : leftover_staging_) bytes += s.bytes();
  for (const DeviceAllocation& b : leftover_blocks_) bytes += b.size();
  return bytes;
}

bool ProgramMode::holds_resources() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return holds_resources_locked();
}

bool ProgramMode::holds_resources_locked() const {
  return phase_ == Phase::Abandoned || claim_.held() || stream_ != nullptr || engine_ != nullptr ||
         !callables_.empty() || !runs_.empty() || !allocations_.empty() ||
         !leftover_staging_.empty() || !leftover_blocks_.empty();
}

int ProgramMode::release_all() {
  ScopedDevice on_device(device_);
  leak_programs_of_abandoned_engine();
  for (auto& [id, run] : runs_) {
    if (int status = run->staging.release(); status != SIMPLER_OK) return status;
  }
  runs_.clear();
  while (!leftover_staging_.empty()) {
    if (int status = leftover_staging_.back().release(); status != SIMPLER_OK) return status;
    leftover_staging_.pop_back();
  }
  while (!leftover_blocks_.empty()) {
    if (int status = leftover_blocks_.back().release(); status != SIMPLER_OK) return status;
    leftover_blocks_.pop_back();
  }
  while (!callables_.empty()) {
    ProgramCallable& callable = *callables_.begin()->second;
    callable.resident = ResidentCallable{};  // unload before its bytes go
    if (int status = callable.code.release(); status != SIMPLER_OK) return status;
    callables_.erase(callables_.begin());
  }
  while (!allocations_.empty()) {
    if (int status = allocations_.begin()->second.release(); status != SIMPLER_OK) return status;
    allocations_.erase(allocations_.begin());
  }
  if (stream_ != nullptr) {
    // A device reset destroyed the stream already (its handle is invalid for good).
    if (!epoch_.reset_since()) {
      if (int status = sim_stream_destroy(stream_); status != SIMPLER_OK) return status;
    }
    stream_ = nullptr;
  }
  if (engine_) {
    std::string error;
    if (int status = engine_->release(&error); status != SIMPLER_OK) return status;
    engine_.reset();
  }
  claim_.release();
  phase_ = Phase::Closed;
  return SIMPLER_OK;
}

int ProgramMode::finalize() {
  std::vector<std::shared_ptr<ProgramRun>> launched;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (phase_ == Phase::Closed) return SIMPLER_OK;
    if (phase_ == Phase::Abandoned) {
      fail(PTO_RUNTIME_ERR_INVALID_STATE,
           "the context was abandoned: a stuck run may still use what it holds, so it is never "
           "finalized (its memory stays allocated for the life of the process)");
    }
    phase_ = Phase::Closing;  // no new work from here on
    for (const auto& [id, run] : runs_) {
      if (run->launched) launched.push_back(run);
    }
  }
  for (const auto& run : launched) (void)run->wait_done(-1);  // program mode owns its stream

  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_ == Phase::Closed) return SIMPLER_OK;
  int status = release_all();
  if (status != SIMPLER_OK) {
    fail(status, std::string("a release failed: ") + simpler_status_name(status) +
                     "; what is left is kept: close again " SIMPLER_HOW_TO_CLOSE);
  }
  return status;
}

void ProgramMode::abandon() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_ == Phase::Abandoned) return;
  // A thread of the engine may still run the stuck kernel: nothing it can reach is freed
  // or unloaded, ever (this object is never destroyed either: holds_resources() stays
  // true). Only the claim goes: the device itself is fine, and a new context on it gets
  // its own stream, engine and memory (the leaked ones stay allocated on the device).
  phase_ = Phase::Abandoned;
  claim_.release();
}

}  // namespace simpler::rt::host
