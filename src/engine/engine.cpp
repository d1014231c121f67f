// Engine: creation (rings, threads), execute (run protocol, watchdog, observers), release.
#include "engine.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "chip_state.h"
#include "engine_defaults.h"
#include "loaded_program.h"
#include "orchestrator.h"
#include "run_diagnostics.h"
#include "run_thread.h"
#include "scheduler.h"
#include "simpler/abi/status.h"
#include "simpler/log/log.h"
#include "simpler/sim/sim_driver.h"
#include "support/clock.h"
#include "tensor_shape.h"
#include "watchdog.h"

namespace simpler::rt {
namespace {

uint64_t or_default(uint64_t value, uint64_t fallback) { return value != 0 ? value : fallback; }

// A config with struct_size 0 is "all defaults"; anything else must validate.
bool normalize_config(const SimplerCallConfig& in, SimplerCallConfig* out, std::string* why) {
  if (in.struct_size == 0) {
    *out = SimplerCallConfig{};
    out->struct_size = sizeof(SimplerCallConfig);
    return true;
  }
  *why = validate_call_config(in);
  if (!why->empty()) return false;
  *out = in;
  return true;
}

}  // namespace

struct Engine::Impl {
  int32_t device = 0;
  bool build_graph_first = false;
  SimplerCallConfig config{};
  uint64_t default_watchdog_ms = 0;  // off unless the config asks for one
  uint32_t default_depth = 1;        // a prewarm config's pipeline_depth
  bool debug_log = false;

  void* heap = nullptr;
  uint64_t heap_bytes = 0;
  uint64_t heap_epoch = 0;             // the device's reset epoch when the heap was allocated
  std::atomic<uint64_t> committed{0};  // readable while another thread runs or releases

  ChipState chip;
  std::unique_ptr<Orchestrator> orchestrator;
  std::vector<std::unique_ptr<Scheduler>> schedulers;
  std::vector<std::thread> threads;
  Watchdog watchdog{chip, [this] { return progress(); }};
  RunDiagnostics diagnostics;
  // Runs the orchestration of watched runs; the caller of execute() waits and polls.
  RunThread runner;
  ChipStorageTaskArgs runner_args{};  // the runner's own copy: it may outlive execute()

  std::mutex execute_mutex;  // one run at a time
  bool released = false;
  // A watched run was given up on: a thread of ours may still be inside user code.
  std::atomic<bool> abandoned{false};
  // The first poisoning error (a caught signal, a timeout), returned by every later run.
  mutable std::mutex sticky_mutex;  // not execute_mutex: readable while a run executes
  int sticky_code = SIMPLER_OK;
  std::string sticky_message;

  // The engine is poisoned: the first poisoning status is what every later run gets.
  void record_sticky(int status, const std::string& message) {
    std::lock_guard<std::mutex> lock(sticky_mutex);
    if (sticky_code == SIMPLER_OK) {
      sticky_code = status != SIMPLER_OK ? status : PTO_RUNTIME_ERR_INTERNAL;
      sticky_message = message;
    }
  }

  uint64_t progress() const {
    uint64_t p = orchestrator->progress();
    for (const auto& s : schedulers) p += s->progress();
    p += chip.clusters.completed.load(std::memory_order_relaxed);
    return p;
  }

  void stop_threads() {
    chip.shutdown.store(true, std::memory_order_release);
    chip.scheduler_parker.notify_all();
    chip.orchestrator_parker.notify_all();
    const bool detach = abandoned.load(std::memory_order_acquire);
    for (std::thread& t : threads) {
      if (!t.joinable()) continue;
      // A thread stuck in a kernel never returns: joining it would hang the caller.
      if (detach) {
        t.detach();
      } else {
        t.join();
      }
    }
    threads.clear();
    if (chip.clusters.crew) chip.clusters.crew->stop(detach);
  }

  // Observer lanes: the caller of execute(), the schedulers, the cluster-task helpers,
  // and one per core for the parts that run cooperatively (ClusterCrew::core_lane).
  uint32_t lanes() const {
    return static_cast<uint32_t>(schedulers.size() + 1) + 2 * chip.clusters.max_helpers();
  }

  // Runs the orchestration on the runner thread while this thread polls the watchdog.
  // False when the watchdog fired and the run was abandoned (the error is latched).
  bool run_watched(const ChipStorageTaskArgs& args, uint64_t timeout_ms, const std::string& name) {
    runner_args = args;
    runner.start([this] { orchestrator->run(runner_args); });
    watchdog.arm(timeout_ms, name);
    for (;;) {
      if (runner.wait_for(watchdog.slice())) return true;
      if (watchdog.poll()) break;
    }
    // The run may still drain on its own (a slow kernel just finished); a stuck one is
    // given up on: its threads are detached at release and the engine's memory leaked.
    if (runner.wait_for(std::chrono::milliseconds(20))) return true;
    runner.abandon();
    abandoned.store(true, std::memory_order_release);
    return false;
  }

  bool device_was_reset() const {
    uint64_t now = 0;
    return sim_device_reset_epoch(device, &now) == SIMPLER_OK && now != heap_epoch;
  }

  int free_heap(std::string* error) {
    if (heap == nullptr) return SIMPLER_OK;
    // A device reset freed the heap already; its address may be someone else's now.
    const int rc = device_was_reset() ? SIMPLER_OK : sim_free(heap);
    if (rc != SIMPLER_OK) {
      if (error != nullptr) {
        *error = std::string("freeing the engine's heap ring failed: ") + simpler_status_name(rc);
      }
      return rc;
    }
    heap = nullptr;
    committed.store(0, std::memory_order_relaxed);
    return SIMPLER_OK;
  }
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
  if (!impl_) return;
  impl_->stop_threads();
  if (impl_->abandoned.load(std::memory_order_acquire)) {
    // A detached thread may still run inside a kernel and touch any of this (task slots,
    // the heap ring the kernel writes): leaked for the life of the process, never freed
    // under it.
    (void)impl_.release();
    return;
  }
  (void)impl_->free_heap(nullptr);
}

int Engine::create(const EngineOptions& options, std::unique_ptr<Engine>* out, std::string* error) {
  std::string scratch;
  std::string& err = error != nullptr ? *error : scratch;
  if (out == nullptr) {
    err = "Engine::create: out is null";
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  out->reset();
  SimplerCallConfig config{};
  std::string why;
  if (!normalize_config(options.config, &config, &why)) {
    err = "invalid config: " + why;
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  int32_t current = -1;
  if (sim_get_device(&current) != SIMPLER_OK || current != options.device) {
    err = "device " + std::to_string(options.device) +
          " must be current on the calling thread (sim_set_device) before creating its engine";
    return PTO_RUNTIME_ERR_INVALID_STATE;
  }
  SimTopology topology{};
  if (int rc = sim_device_topology(options.device, &topology); rc != SIMPLER_OK) {
    err = std::string("cannot read the topology of device ") + std::to_string(options.device) +
          ": " + simpler_status_name(rc);
    return rc;
  }
  if (topology.clusters < 1) {
    err = "device " + std::to_string(options.device) + " has no clusters";
    return PTO_RUNTIME_ERR_INVALID_STATE;
  }
  const int32_t aicpu =
      config.aicpu_thread_num != 0
          ? config.aicpu_thread_num
          : (topology.aicpu_threads >= 2 ? topology.aicpu_threads : kDefaultAicpuThreads);
  const int32_t scheduler_count = std::max(1, std::min(aicpu - 1, topology.clusters));

  auto impl = std::make_unique<Impl>();
  impl->device = options.device;
  impl->build_graph_first = options.build_graph_first;
  impl->diagnostics.set_numbered(options.number_diagnostics);
  impl->config = config;
  impl->default_watchdog_ms = config.watchdog_timeout_ms;
  impl->default_depth = config.pipeline_depth != 0 ? config.pipeline_depth : 1;
  impl->debug_log = simpler_log_enabled(SIMPLER_LOG_LEVEL_DEBUG) != 0;

  const uint64_t window = or_default(config.task_window_size, kDefaultTaskWindow);
  impl->heap_bytes =
      (or_default(config.heap_ring_bytes, kDefaultHeapRingBytes) + kHeapAlignment - 1) /
      kHeapAlignment * kHeapAlignment;
  try {
    ChipState& chip = impl->chip;
    chip.window = window;
    chip.window_mask = window - 1;
    chip.slots = std::make_unique<TaskSlot[]>(window);
    chip.init_cores(static_cast<uint32_t>(topology.clusters));
    chip.clusters.init(static_cast<uint32_t>(topology.clusters),
                       static_cast<uint32_t>(scheduler_count + 1));
    for (auto& queue : chip.ready) queue.reset(2 * window);

    (void)sim_device_reset_epoch(options.device, &impl->heap_epoch);
    if (int rc = sim_malloc(&impl->heap, impl->heap_bytes); rc != SIMPLER_OK) {
      impl->heap = nullptr;
      err = "cannot allocate the heap ring (" + std::to_string(impl->heap_bytes) +
            " bytes) on device " + std::to_string(options.device) + ": " + simpler_status_name(rc) +
            " (lower heap_ring_bytes)";
      return rc;
    }
    impl->committed.store(impl->heap_bytes, std::memory_order_relaxed);
    OrchestratorSizes sizes;
    sizes.device = options.device;
    sizes.heap_base = static_cast<uint8_t*>(impl->heap);
    sizes.heap_bytes = impl->heap_bytes;
    sizes.arena_bytes = std::max(kMinArenaBytes, window * kArenaBytesPerSlot);
    sizes.dep_pool_size = or_default(config.dep_pool_size, kDefaultDepPoolSize);
    sizes.tensormap_capacity = or_default(config.tensormap_capacity, kDefaultTensorMapCapacity);
    impl->orchestrator = std::make_unique<Orchestrator>(chip, sizes);

    // No more runnable threads than hardware threads: the caller of execute() is one,
    // so at most hardware - 1 schedulers are awake at once (the rest stay parked).
    const int32_t hardware =
        static_cast<int32_t>(std::max(2u, std::thread::hardware_concurrency()));
    chip.awake_orchestrating = std::max(1, std::min(scheduler_count, hardware - 1));
    chip.awake_unattended = std::max(1, std::min(scheduler_count, hardware));
    chip.max_awake = chip.awake_orchestrating;
    for (int32_t i = 0; i < scheduler_count; ++i) {
      // Lane 0 is the caller of execute(), schedulers 1..; each starts its core search
      // at its own share of the clusters.
      impl->schedulers.push_back(std::make_unique<Scheduler>(
          chip, static_cast<uint32_t>(i + 1), i * topology.clusters / scheduler_count));
    }
    for (auto& s : impl->schedulers) {
      impl->threads.emplace_back([s = s.get()] { s->run(); });
      // Named so profilers (and the thread-accounting tests) can tell schedulers apart;
      // named here, not in the thread, so the name is set when create() returns.
      pthread_setname_np(impl->threads.back().native_handle(), "simpler-sched");
    }
  } catch (const std::exception& e) {
    impl->stop_threads();
    (void)impl->free_heap(nullptr);
    err = std::string("cannot set up the engine: ") + e.what();
    return PTO_RUNTIME_ERR_INTERNAL;
  }
  out->reset(new Engine(std::move(impl)));
  return SIMPLER_OK;
}

int Engine::execute(const LoadedProgram& program, const ChipStorageTaskArgs& args,
                    const SimplerCallConfig* run_config, std::string* error, RunDone on_done,
                    bool* deferred, bool next_follows) {
  return run(program, args, run_config, error, std::move(on_done), deferred,
             /*check_entry_tensors=*/true, next_follows);
}

int Engine::execute_checked(const LoadedProgram& program, const ChipStorageTaskArgs& args,
                            std::string* error) {
  return run(program, args, nullptr, error, {}, nullptr, /*check_entry_tensors=*/false,
             /*next_follows=*/false);
}

// The fixed cost of a run matters for kernel mode, where every launch is one (an empty
// program is a few hundred ns): whatever only diagnostics use (clock reads, the
// observer's set-up, the facts) is done only when the run's flags ask for files.
int Engine::run(const LoadedProgram& program, const ChipStorageTaskArgs& args,
                const SimplerCallConfig* run_config, std::string* error, RunDone on_done,
                bool* deferred, bool check_entry_tensors, bool next_follows) {
  std::string scratch;
  std::string& err = error != nullptr ? *error : scratch;
  err.clear();
  if (deferred != nullptr) *deferred = false;
  Impl& I = *impl_;
  std::lock_guard<std::mutex> serialize(I.execute_mutex);
  if (I.released) {
    err = "the engine was released; create a new one";
    return PTO_RUNTIME_ERR_INVALID_STATE;
  }
  if (I.chip.poisoned.load(std::memory_order_acquire)) {
    std::string why;
    const int code = sticky_error(&why);
    err = "the context failed earlier and refuses new work (" + why +
          "); close it and create a new one";
    return code;
  }
  if (I.device_was_reset()) {
    err = "device " + std::to_string(I.device) +
          " was reset (sim_device_reset) after this engine was created: its heap ring is gone";
    return PTO_RUNTIME_ERR_INVALID_STATE;
  }
  const LoadedProgram::Impl& P = program.impl();

  // The engine's own config unless the run brings one (no copy of its 256-byte prefix).
  std::optional<SimplerCallConfig> own_config;
  std::string why;
  if (run_config != nullptr) {
    own_config.emplace();
    if (!normalize_config(*run_config, &*own_config, &why)) {
      err = "invalid run config: " + why;
      return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
    }
  }
  const SimplerCallConfig& config = own_config ? *own_config : I.config;
  const bool diagnosed = config.flags != 0;
  const uint64_t watchdog_ms = or_default(config.watchdog_timeout_ms, I.default_watchdog_ms);
  const bool watched = watchdog_ms != 0;

  if (args.tensor_count != P.tensor_count || args.scalar_count != P.scalar_count) {
    err = "the entry args have " + counted(args.tensor_count, "tensor") + " and " +
          counted(args.scalar_count, "scalar") + "; the callable's signature takes " +
          counted(P.tensor_count, "tensor") + " and " + counted(P.scalar_count, "scalar");
    return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  }
  for (uint32_t i = 0; check_entry_tensors && i < args.tensor_count; ++i) {
    if (!check_device_tensor(args.tensors[i], &why)) {
      err = "entry tensor " + std::to_string(i) + ": " + why;
      return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
    }
  }

  // A run that writes diagnostics or is watched is not pipelined: its files and its
  // watchdog cover exactly its own tasks.
  uint32_t depth = config.pipeline_depth != 0 ? config.pipeline_depth : I.default_depth;
  if (!on_done || watched || diagnosed || depth == 0) depth = 1;

  I.chip.observer.store(nullptr, std::memory_order_relaxed);  // set once the run starts
  I.diagnostics.begin_run(config, I.lanes());
  RunOptions run;
  run.build_graph_first = I.build_graph_first;
  run.observer = I.diagnostics.graph_observer();
  run.block_observer = I.diagnostics.block_observer();
  run.debug_log = I.debug_log;
  run.watchdog = nullptr;  // polled here, by a thread that runs no user code
  run.pipeline_depth = depth;
  run.next_follows = next_follows;
  run.timed = diagnosed;
  if (depth > 1) {
    // A crash or a timeout after execute() returned still makes the engine sticky.
    run.on_done = [&I, on_done = std::move(on_done)](int status, const std::string& message) {
      if (I.chip.poisoned.load(std::memory_order_acquire)) I.record_sticky(status, message);
      on_done(status, message);
    };
  }
  I.chip.running.tracking.store(watched, std::memory_order_relaxed);
  RunTrack* track = I.orchestrator->begin_run(P, run);

  RunFacts facts;
  if (diagnosed) facts.start_ns = support::steady_now_ns();
  bool finished = true;
  if (!watched) {
    // The calling thread is the orchestrator of its run (no hand-off, no wake-up of
    // another thread).
    I.orchestrator->run(args);
  } else {
    try {
      finished = I.run_watched(args, watchdog_ms, P.func_name);
    } catch (const std::system_error& e) {
      I.orchestrator->abort_run();
      err = std::string("cannot start the orchestrator thread of a watched run: ") + e.what();
      return PTO_RUNTIME_ERR_INTERNAL;
    }
  }
  if (depth > 1) {
    // In flight: its tasks still execute; the callback reports its status.
    if (deferred != nullptr) *deferred = true;
    return SIMPLER_OK;
  }
  int status = track->status.code();
  if (status != SIMPLER_OK) err = track->status.message();
  if (!finished || status == SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT) {
    I.chip.poisoned.store(true, std::memory_order_release);
  }
  if (I.chip.poisoned.load(std::memory_order_acquire)) I.record_sticky(status, err);
  // An abandoned run's state is still in use by the stuck thread: no diagnostics.
  if (!finished || !diagnosed) return status;

  // Every lane is quiescent now: the observer's records are complete.
  facts.end_ns = support::steady_now_ns();
  facts.args = &args;
  facts.signature = &P.signature;
  facts.program = P.func_name;
  facts.status = status;
  facts.tasks = I.orchestrator->tasks_submitted();
  facts.orchestration_ns = I.orchestrator->orchestration_ns();
  facts.orchestration_start_ns = I.orchestrator->orchestration_start_ns();
  std::string diag_error;
  if (!I.diagnostics.write(facts, &diag_error)) {
    // Diagnostics are a by-product: the run's results (and its status) stand.
    simpler_log(SIMPLER_LOG_LEVEL_WARNING, "diagnostics", "files of '%s' not written: %s",
                P.func_name.c_str(), diag_error.c_str());
  }
  return status;
}

uint64_t Engine::committed_bytes() const {
  return impl_->committed.load(std::memory_order_relaxed);
}

int32_t Engine::device() const { return impl_->device; }

int Engine::release(std::string* error) {
  Impl& I = *impl_;
  std::lock_guard<std::mutex> serialize(I.execute_mutex);
  // Pipelined runs still in flight finish first (their callers were told to wait for them;
  // this frees what their orchestrations allocated outside scopes).
  if (!I.released && !I.abandoned.load(std::memory_order_acquire)) I.orchestrator->drain_idle();
  I.released = true;
  I.stop_threads();
  if (I.abandoned.load(std::memory_order_acquire)) {
    // The heap ring stays allocated (a stuck kernel may still write it); it is no longer
    // this context's, and the destructor leaks the rest.
    I.committed.store(0, std::memory_order_relaxed);
    return SIMPLER_OK;
  }
  return I.free_heap(error);
}

bool Engine::abandoned() const { return impl_->abandoned.load(std::memory_order_acquire); }

int Engine::sticky_error(std::string* message) const {
  Impl& I = *impl_;
  if (!I.chip.poisoned.load(std::memory_order_acquire)) return SIMPLER_OK;
  std::lock_guard<std::mutex> lock(I.sticky_mutex);
  if (message != nullptr) *message = I.sticky_message;
  return I.sticky_code != SIMPLER_OK ? I.sticky_code : PTO_RUNTIME_ERR_INTERNAL;
}

}  // namespace simpler::rt
