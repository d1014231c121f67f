// simpler::Worker: construction, capability probe, init, close, destruction.
#include "simpler/worker/worker.h"

#include <unistd.h>

#include <cstdio>

#include "api_name.h"
#include "process_guards.h"
#include "simpler/log/log.h"
#include "worker_core.h"

namespace simpler {

using detail::WorkerCore;

const char* worker_state_name(WorkerState state) {
  switch (state) {
    case WorkerState::NEW:
      return "NEW";
    case WorkerState::READY:
      return "READY";
    case WorkerState::FAILED:
      return "FAILED";
    case WorkerState::CLOSED:
      return "CLOSED";
  }
  return "UNKNOWN";
}

void detail::refuse_not_ready(WorkerState state, const char* api) {
  // What to do depends on the state: init() can follow only NEW.
  const char* advice = state == WorkerState::NEW ? "call init() first"
                       : state == WorkerState::FAILED
                           ? "an earlier init failed: close() it and create a new Worker"
                           : "the worker is closed: create a new Worker";
  throw std::runtime_error(detail::api_name(api) +
                           ": requires an initialized (READY) worker (state: " +
                           worker_state_name(state) + "); " + advice);
}

const char* execution_mode_name(ExecutionMode mode) {
  return mode == ExecutionMode::KERNEL ? "kernel" : "program";
}

static ExecutionMode validated_mode(const WorkerOptions& o) {
  ExecutionMode mode;
  if (o.execution_mode == "program") {
    mode = ExecutionMode::PROGRAM;
  } else if (o.execution_mode == "kernel") {
    mode = ExecutionMode::KERNEL;
  } else {
    throw std::invalid_argument("Worker: execution_mode must be 'program' or 'kernel' (got '" +
                                o.execution_mode + "')");
  }
  // The kernel-mode contract: a level other than 2 in kernel mode is a ValueError, whatever
  // the level (kernel mode stays level 2).
  if (mode == ExecutionMode::KERNEL && o.level != 2) {
    throw std::invalid_argument("Worker: execution_mode='kernel' is level 2 only (got level " +
                                std::to_string(o.level) + "); use level=2 with one device");
  }
  if (o.level == 3 || o.level == 4) {
    // Levels 3 and 4 are the Python simpler.Worker (simpler.host); this C++ Worker is one chip.
    throw NotImplementedYet(
        "the C++ Worker is level 2 (one chip); Worker(level=" + std::to_string(o.level) +
        ") is the Python simpler.Worker (simpler.host)");
  }
  if (o.level != 2) {
    throw std::invalid_argument("Worker: level must be 2, 3 or 4 (got " + std::to_string(o.level) +
                                ")");
  }
  if (mode == ExecutionMode::KERNEL && o.enable_sdma) {
    throw std::invalid_argument(
        "Worker: enable_sdma=True is not supported with execution_mode='kernel' (the caller owns "
        "the stream); drop enable_sdma or use execution_mode='program'");
  }
  if (o.device_id < 0) {
    throw std::invalid_argument("Worker: device_id must be >= 0 (got " +
                                std::to_string(o.device_id) + ")");
  }
  return mode;
}

Worker::Worker(WorkerOptions options) : core_(std::make_shared<WorkerCore>()) {
  core_->mode = validated_mode(options);
  // Where the runtime builds live, resolved now (a relative lib_dir or $SIMPLER_LIB_DIR
  // is taken against today's working directory, not the one at init).
  core_->lib_dir = options.lib_dir.empty() ? default_lib_dir() : absolute_lib_dir(options.lib_dir);
  core_->options = std::move(options);
}

Worker::~Worker() {
  WorkerCore& c = *core_;
  std::lock_guard lock(c.lifecycle_mu);
  if (!c.chip) return;
  if (c.forked()) {
    // Inherited from the parent by fork(): the parent owns the context; the child makes
    // no native call on it (its threads do not exist here) and simply leaves it.
    pin_for_process_lifetime(std::move(c.chip));
    return;
  }
  if (c.mode == ExecutionMode::KERNEL) {
    simpler_log(SIMPLER_LOG_LEVEL_WARNING, "worker",
                "kernel-mode Worker on device %d destroyed without close(); its ChipWorker is "
                "pinned for the life of the process instead of being finalized on this thread "
                "(call close() on the init thread)",
                c.options.device_id);
    pin_for_process_lifetime(std::move(c.chip));
    return;
  }
  // Program mode: release everything, best effort, on whatever thread collected the
  // Worker (the runtime owns a program-mode device, so nothing binds the teardown to the
  // init thread): its memory and its device claim come back. A teardown that fails pins
  // the context with a warning.
  simpler_log(SIMPLER_LOG_LEVEL_WARNING, "worker",
              "program-mode Worker on device %d destroyed without close(); its device memory "
              "and device claim are released now, on the thread that destroyed it (call "
              "close() to release them when you choose)",
              c.options.device_id);
  try {
    {
      std::lock_guard plock(c.program_mu);
      if (!c.drain_runs_within(std::chrono::milliseconds(c.close_grace_ms.load()))) {
        c.abandon_stuck_context("~Worker");  // bounded: never waits for a stuck run
        return;
      }
    }
    c.chip->finalize_program_context_on_any_thread();
  } catch (const std::exception& e) {
    simpler_log(SIMPLER_LOG_LEVEL_ERROR, "worker",
                "program-mode Worker teardown failed in its destructor: %s", e.what());
    pin_for_process_lifetime(std::move(c.chip));
    return;
  }
  std::unique_ptr<ChipWorker> chip = std::move(c.chip);  // destroyed here
}

const WorkerOptions& Worker::options() const noexcept { return core_->options; }
ExecutionMode Worker::execution_mode() const noexcept { return core_->mode; }
WorkerState Worker::state() const noexcept { return core_->state.load(); }

void Worker::set_close_grace(std::chrono::milliseconds grace) {
  if (grace.count() < 0) throw std::invalid_argument("Worker.set_close_grace: grace must be >= 0");
  core_->close_grace_ms.store(grace.count());
}

std::chrono::milliseconds Worker::close_grace() const noexcept {
  return std::chrono::milliseconds(core_->close_grace_ms.load());
}

bool Worker::holds_native_context() const noexcept {
  std::lock_guard lock(core_->lifecycle_mu);
  return core_->chip != nullptr;
}

bool Worker::kernel_mode_supported() {
  WorkerCore& c = *core_;
  if (c.options.level != 2) return false;
  if (c.mode == ExecutionMode::KERNEL && c.state.load() == WorkerState::READY) return true;
  std::lock_guard lock(c.lifecycle_mu);
  if (c.kernel_supported_cache) return *c.kernel_supported_cache;
  // Errors (a missing build) propagate and are not cached.
  const RuntimeBins bins = find_runtime_build(c.options.platform, c.options.runtime, c.lib_dir);
  const bool supported = ChipWorker::probe_kernel_mode_supported(bins);
  c.kernel_supported_cache = supported;
  return supported;
}

static void require_new_for_init(WorkerState state) {
  switch (state) {
    case WorkerState::NEW:
      return;
    case WorkerState::READY:
      throw std::runtime_error("Worker.init: already initialized (READY)");
    case WorkerState::FAILED:
      throw std::runtime_error(
          "Worker.init: an earlier init failed; close() this Worker and create a new one");
    case WorkerState::CLOSED:
      throw std::runtime_error("Worker.init: the worker is closed; create a new Worker");
  }
}

void Worker::init(const std::optional<CallConfig>& prewarm_config,
                  const std::optional<CallConfig>& config) {
  WorkerCore& c = *core_;
  std::lock_guard lock(c.lifecycle_mu);
  require_new_for_init(c.state.load());
  if (c.mode == ExecutionMode::KERNEL) {
    if (prewarm_config) {
      throw std::invalid_argument(
          "Worker.init: prewarm_config is a program-mode option (a positional argument binds to "
          "it); kernel mode takes init(config=CallConfig(...)) only");
    }
    if (!config) {
      throw std::invalid_argument(
          "Worker.init: kernel mode requires config=CallConfig(...) (keyword-only)");
    }
    config->validate();
    // The runtime refuses it too, but only after a ChipWorker exists (FAILED): refused here
    // it leaves the Worker NEW, like the other argument refusals, so a correct init follows.
    if (config->pipeline_depth > 1) {
      throw ChipWorkerError(
          PTO_RUNTIME_ERR_INVALID_ARGUMENT,
          "Worker.init: config.pipeline_depth: " + std::to_string(config->pipeline_depth) +
              " applies to program mode only (kernel-mode launches are "
              "ordered by the caller's stream); leave it 0 or 1");
    }
  } else {
    if (config) {
      throw std::invalid_argument(
          "Worker.init: config= is a kernel-mode option; in program mode pass "
          "prewarm_config=CallConfig(...) or nothing");
    }
    if (prewarm_config) prewarm_config->validate();
  }
  // A missing or unknown build is refused before anything is created (state stays NEW).
  const RuntimeBins bins = find_runtime_build(c.options.platform, c.options.runtime, c.lib_dir);

  auto chip = std::make_unique<ChipWorker>();
  try {
    if (c.mode == ExecutionMode::KERNEL) {
      chip->kernel_init(c.options.device_id, bins, *config);
    } else {
      chip->init(c.options.device_id, bins, prewarm_config);
      std::lock_guard plock(c.program_mu);
      for (auto& [token, reg] : c.callables)
        reg.chip_handle = chip->register_callable(*reg.callable);
    }
  } catch (...) {
    // Rollback: finalize once, on this (the init) thread. The ChipWorker already released
    // what a failed init took; a program-mode init that failed while installing callables
    // is still INITIALIZED and is released here.
    c.state.store(WorkerState::FAILED);
    try {
      chip->finalize();
    } catch (const std::exception& e) {
      simpler_log(SIMPLER_LOG_LEVEL_ERROR, "worker",
                  "rolling back a failed Worker.init could not release the context (%s); it "
                  "is pinned for the life of the process",
                  e.what());
      pin_for_process_lifetime(std::move(chip));
    }
    std::lock_guard plock(c.program_mu);
    for (auto& [token, reg] : c.callables) reg.chip_handle.reset();
    throw;
  }
  c.chip = std::move(chip);
  c.init_thread = std::this_thread::get_id();
  c.bound_fork_epoch = fork_epoch();
  c.bound_pid = getpid();
  c.state.store(WorkerState::READY);
}

// Takes `lock` within `grace`. close() is rare and the holder is a short prepare/launch, so
// it retries every millisecond (sleeping in between) rather than making every launch pay
// for a wake-up notification. (std::timed_mutex is avoided: TSan does not model it.)
static bool lock_within_grace(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    if (lock.try_lock()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        deadline - now, std::chrono::milliseconds(1)));
  }
}

void Worker::close() {
  WorkerCore& c = *core_;
  std::lock_guard lock(c.lifecycle_mu);
  const WorkerState state = c.state.load();
  if (state == WorkerState::NEW || state == WorkerState::FAILED) {
    c.state.store(WorkerState::CLOSED);  // a failed init was already rolled back
    return;
  }
  if (!c.chip) {
    c.state.store(WorkerState::CLOSED);
    return;  // closed already: idempotent
  }
  c.refuse_if_forked("close");
  if (std::this_thread::get_id() != c.init_thread) {
    throw std::runtime_error(
        "Worker.close: must be called on the thread that called init() (the context is bound "
        "to it); the worker stays " +
        std::string(worker_state_name(state)));
  }
  // Published before taking the kernel lock: a racing launch either sees CLOSED or
  // finishes before the native finalize.
  c.state.store(WorkerState::CLOSED);
  c.teardown_pending = true;
  if (c.mode == ExecutionMode::KERNEL) {
    std::unique_lock klock(c.kernel_mu, std::defer_lock);
    if (!lock_within_grace(klock, std::chrono::milliseconds(c.close_grace_ms.load()))) {
      throw WorkerTimeoutError(
          "Worker.close: a kernel prepare/launch still holds the worker after the " +
          std::to_string(c.close_grace_ms.load()) +
          " ms grace period; the context is kept — call close() again once it returns");
    }
    c.chip->finalize();  // a failure propagates; chip, images and ids are kept for a retry
    c.kernel_images.clear();
    c.minted_ids.clear();
    c.chip.reset();
  } else {
    std::lock_guard plock(c.program_mu);
    if (!c.drain_runs_within(std::chrono::milliseconds(c.close_grace_ms.load()))) {
      // A run that never finishes (a hung kernel without a watchdog) must not hang close:
      // the context is given up on and reported (Worker.abandoned_report, stderr).
      c.abandon_stuck_context("close");
      c.teardown_pending = false;
      return;
    }
    c.chip->finalize();
    c.allocations.clear();
    c.buffers.clear();
    for (auto& [token, reg] : c.callables) reg.chip_handle.reset();
    c.chip.reset();
  }
  c.teardown_pending = false;
}

std::string Worker::abandoned_report() const {
  std::lock_guard lock(core_->lifecycle_mu);
  return core_->abandoned_report;
}

uint64_t Worker::committed_device_memory() {
  WorkerCore& c = *core_;
  std::lock_guard lock(c.lifecycle_mu);
  if (!c.chip) return 0;
  // Kernel mode: a query, answered even while a launch holds the kernel lock; the
  // lifecycle lock alone keeps the context from being torn down meanwhile.
  if (c.mode == ExecutionMode::KERNEL) return c.chip->committed_device_memory();
  std::lock_guard plock(c.program_mu);
  return c.chip->committed_device_memory();
}

}  // namespace simpler
