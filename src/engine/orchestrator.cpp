// The orchestrator: task submission, dependency linking, rings, back-pressure, drain.
#include "orchestrator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "backoff.h"
#include "engine_defaults.h"
#include "fault_guard.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"
#include "simpler/task/task_interface.h"
#include "submit_path.h"
#include "support/clock.h"
#include "tensor_shape.h"

namespace simpler::rt {
namespace {

AccessKind access_kind(uint32_t mode) {
  switch (mode) {
    case SIMPLER_TENSOR_IN:
      return AccessKind::Read;
    case SIMPLER_TENSOR_INOUT:
      return AccessKind::ReadWrite;
    default:
      return AccessKind::Write;  // OUT, OUT_ALLOC
  }
}

std::string dtype_text(uint32_t dtype) {
  return is_valid_data_type(dtype) ? data_type_name(static_cast<DataType>(dtype))
                                   : "invalid (" + std::to_string(dtype) + ")";
}

const char* mode_name(uint32_t mode) {
  switch (mode) {
    case SIMPLER_TENSOR_IN:
      return "IN";
    case SIMPLER_TENSOR_OUT_ALLOC:
      return "OUT_ALLOC";
    case SIMPLER_TENSOR_OUT:
      return "OUT";
    case SIMPLER_TENSOR_INOUT:
      return "INOUT";
    case SIMPLER_TENSOR_NODEP:
      return "NODEP";
    default:
      return "?";
  }
}

const char* direction_name(uint8_t d) {
  switch (d) {
    case CHIP_ARG_IN:
      return "IN";
    case CHIP_ARG_OUT:
      return "OUT";
    case CHIP_ARG_INOUT:
      return "INOUT";
    default:
      return "SCALAR";
  }
}

}  // namespace

Orchestrator::Orchestrator(ChipState& chip, const OrchestratorSizes& sizes)
    : chip_(chip),
      // Lane 0 starts its core search half-way through each type, away from the first
      // scheduler's cores.
      dispatcher_(chip, 0, {chip.core_count[0] / 2, chip.core_count[1] / 2}),
      tmap_(sizes.tensormap_capacity),
      addresses_(sizes.device),
      device_(sizes.device) {
  arena_.reset(sizes.arena_bytes);
  arena_mem_ = std::make_unique<uint8_t[]>(sizes.arena_bytes);
  pool_size_ = sizes.dep_pool_size;
  pool_ = std::make_unique<Edge[]>(pool_size_);
  heap_base_ = sizes.heap_base;
  heap_.reset(sizes.heap_bytes);
  blocks_.resize(sizes.heap_bytes / kHeapAlignment + 2);
  scopes_.reserve(kMaxScopeDepth);
  deps_.reserve(4 * CHIP_MAX_TENSOR_ARGS);
  // run_immediately sets the per-task fields only; its kernel arguments are built in
  // immediate_argv_ and passed to run_alone, so immediate_.args is never read.
  immediate_.block_num = 1;
}

RunTrack* Orchestrator::begin_run(const LoadedProgram::Impl& program, const RunOptions& options) {
  program_ = &program;
  options_ = options;
  if (options_.pipeline_depth < 1) options_.pipeline_depth = 1;
  // The immediate run (immediate_run.cpp): TMR with one run in flight, and no dependency
  // graph recorded (it would miss the edges to tasks completed that way).
  immediate_mode_ =
      !options_.build_graph_first && options_.pipeline_depth == 1 && options_.observer == nullptr;
  // The orchestration gets a pointer to this table; one that wrote through it (casting
  // const away) must not break the next run of another program.
  api_ = make_orch_api(this);
  // The views rest on the address cache's allocations: kept exactly as long as they are.
  if (!addresses_.begin_run(reinterpret_cast<uintptr_t>(heap_base_), heap_.capacity())) {
    views_.clear();
  }
  // A free track: every execute() returns with at most SIMPLER_MAX_PIPELINE_DEPTH runs
  // in flight, and there is one track more than that.
  run_ = nullptr;
  for (RunTrack& t : chip_.runs) {
    if (!t.busy.load(std::memory_order_acquire)) {
      run_ = &t;
      break;
    }
  }
  if (run_ == nullptr) run_ = &spare_track_;  // unreachable by the count above; never null
  run_->status.reset();
  run_->first_id = run_->end_id = 0;
  run_->counted = options_.pipeline_depth > 1;
  run_->on_done = options_.pipeline_depth > 1 ? options_.on_done : RunDone{};
  run_->remaining.store(kUncounted, std::memory_order_relaxed);
  run_->busy.store(true, std::memory_order_release);
  deferred_ = nullptr;
  last_wake_head_ = 0;
  building_ = false;
  orchestration_ns_ = 0;
  return run_;
}

void Orchestrator::abort_run() {
  run_->on_done = nullptr;
  run_->busy.store(false, std::memory_order_release);
}

void Orchestrator::start_ids() {
  if (drained_) {
    // A fresh id range: nothing of an earlier (possibly failed) run can alias it.
    head_ += 1;
    tail_ = done_cursor_ = head_;
  }
  // Else earlier pipelined runs are still in flight: ids continue without a gap (the
  // slots are reclaimed in id order across runs) and the tensor map keeps their entries,
  // so this run's tasks depend on theirs exactly as on a task of their own run.
  run_first_ = head_;
  run_->first_id = run_first_;
  chip_.first_task = run_first_;
}

void Orchestrator::run(const ChipStorageTaskArgs& args) {
  chip_.orchestrator_returns();  // this thread runs kernels too from here on
  if (options_.pipeline_depth == 1) {
    drain();  // today's behaviour: a run starts on an idle chip
  } else {
    wait_runs_below(options_.pipeline_depth - 1);
  }
  start_ids();
  chip_.observer.store(options_.block_observer, std::memory_order_release);
  const auto start =
      options_.timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  orchestration_start_ns_ = options_.timed ? support::steady_now_ns() : 0;
  building_ = options_.build_graph_first;
  int rc = 0;
  FaultInfo signal;
  // A watched run: the watchdog counts the orchestration's silence from here, not from
  // before this thread was scheduled.
  const bool tracked = chip_.running.tracking.load(std::memory_order_relaxed);
  if (tracked) chip_.running.orchestration_enter(support::steady_now_ns());
  const bool returned = guarded_call([&] { rc = program_->orchestration(&args, &api_); }, &signal);
  if (tracked) chip_.running.orchestration_leave();
  dispatcher_.let_go();  // this thread runs no more direct blocks in this run
  building_ = false;
  if (options_.timed) {
    orchestration_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  }
  if (!returned) {
    // The fault may have left this thread's own state (rings, tensor map) half-updated if
    // it happened inside an API call: the engine is poisoned either way, and every run in
    // flight fails with this one.
    chip_.poisoned.store(true, std::memory_order_release);
    const std::string message = "the orchestration '" + program_->func_name + "' crashed with " +
                                describe_fault(signal) +
                                "; the context is now failed: close it and create a new one";
    fail(SIMPLER_CHIP_ERR_ORCH_FATAL, message);
    chip_.fail_all(SIMPLER_CHIP_ERR_ORCH_FATAL, message);
  } else if (rc != 0) {
    fail(SIMPLER_CHIP_ERR_ORCH_FATAL,
         "the orchestration '" + program_->func_name + "' returned " + std::to_string(rc));
  }
  if (options_.pipeline_depth == 1) {
    finish();
  } else {
    end_pipelined();
  }
}

void Orchestrator::release_graph() {
  if (options_.build_graph_first) {
    for (uint64_t id = run_first_; id < head_; ++id) drop_guard(chip_.slot(id), false);
    chip_.wake_schedulers(chip_.max_awake);
  } else {
    release_deferred();
  }
}

void Orchestrator::finish() {
  release_graph();
  wait_all_done(/*stop_on_error=*/false);
  // Every task completed: all rings are empty again.
  scopes_.clear();
  scopes_changed();
  // A run that submitted nothing left the map as the previous run's clear() did (an
  // empty program, e.g. a no-op kernel-mode launch, stays a few hundred ns).
  if (head_ != run_first_) tmap_.clear();
  reset_rings();
  free_loose(loose_);
  run_->end_id = head_;
  run_->busy.store(false, std::memory_order_release);
}

void Orchestrator::reset_rings() {
  tail_ = done_cursor_ = head_;
  arena_.release_all();
  pool_tail_ = pool_head_;
  heap_.release_all();
  block_tail_ = block_head_;
  drained_ = true;
}

void Orchestrator::end_pipelined() {
  release_graph();
  // Scopes left open end with the orchestration: their heap blocks are freed once every
  // task submitted so far completed, and their tasks are no longer pinned.
  for (uint64_t b = block_tail_; b < block_head_; ++b) {
    HeapBlock& block = blocks_[b % blocks_.size()];
    if (block.free_after == kOpen) block.free_after = head_;
  }
  scopes_.clear();
  scopes_changed();
  run_->end_id = head_;
  run_->loose = std::move(loose_);
  loose_.clear();
  drained_ = false;
  // Nobody helps the schedulers once this thread returned: one more may run, and they are
  // woken for what is ready, unless this thread orchestrates the next run at once.
  chip_.orchestrator_leaves(/*wake=*/!options_.next_follows);
  // Drop the orchestration's guard: kUncounted minus the completions so far; whoever
  // brings it to zero (here, or the last task's completing thread) completes the run.
  const auto uncounted = static_cast<int64_t>(kUncounted - (head_ - run_first_));
  if (run_->remaining.fetch_sub(uncounted, std::memory_order_acq_rel) == uncounted) {
    run_->finish();
  }
}

void Orchestrator::drain() {
  collect_finished();
  if (drained_) return;
  release_deferred();
  wait_all_done(/*stop_on_error=*/false);  // failed runs' tasks complete too (skipped)
  for (RunTrack& t : chip_.runs) {
    // The last task's thread may still be in the run's completion callback.
    while (&t != run_ && t.busy.load(std::memory_order_acquire)) std::this_thread::yield();
  }
  collect_finished();
  tmap_.clear();
  reset_rings();
}

void Orchestrator::wait_runs_below(uint32_t limit) {
  for (;;) {
    collect_finished();
    RunTrack* oldest = nullptr;  // the oldest run still executing
    uint32_t busy = 0, executing = 0;
    for (RunTrack& t : chip_.runs) {
      if (&t == run_ || !t.busy.load(std::memory_order_acquire)) continue;
      ++busy;
      // Every task done, only its completion callback left: its caller may already have
      // seen it end and submitted this run. Not worth waiting for the oldest run (a long
      // one) for: that would serialize what the depth allows.
      if (t.remaining.load(std::memory_order_acquire) == 0) continue;
      ++executing;
      if (oldest == nullptr || t.first_id < oldest->first_id) oldest = &t;
    }
    if (busy <= limit) return;
    if (executing <= limit) {  // the callbacks are about to return (a track each)
      std::this_thread::yield();
      continue;
    }
    // Every task of the oldest run, then its completion callback (on another thread).
    for (;;) {
      advance_done_cursor();
      if (done_cursor_ >= oldest->end_id) break;
      const uint64_t last = oldest->end_id - 1;
      const bool last_done = chip_.slot(last).done_id.load(std::memory_order_acquire) == last;
      wait_for_completion(last_done ? done_cursor_ : last, /*stop_on_error=*/false);
    }
    while (oldest->busy.load(std::memory_order_acquire)) std::this_thread::yield();
  }
}

void Orchestrator::collect_finished() {
  for (RunTrack& t : chip_.runs) {
    if (&t == run_ || t.busy.load(std::memory_order_acquire) || t.loose.empty()) continue;
    free_loose(t.loose);
  }
}

void Orchestrator::free_loose(std::vector<void*>& blocks) {
  // Every task of their run completed; sim_free is ordered after the work queued on the
  // run's own stream (this job), so the blocks are reused only once the run is over.
  for (void* p : blocks) (void)sim_free(p);
  blocks.clear();
}

bool Orchestrator::loose_alloc(uint64_t bytes, uint8_t** out) {
  void* p = nullptr;
  const int rc = sim_malloc_on_device(device_, &p, std::max<uint64_t>(bytes, 1));
  if (rc != SIMPLER_OK) {
    fail(SIMPLER_CHIP_ERR_DEVICE_FAULT,
         "a scope-less allocation of " + std::to_string(bytes) + " bytes failed (" +
             simpler_status_name(rc) +
             "); allocations outside any scope live until the run ends: allocate inside scopes");
    return false;
  }
  try {
    loose_.push_back(p);
  } catch (...) {
    (void)sim_free(p);
    throw;  // guarded() turns it into a failed run
  }
  addresses_.remember(reinterpret_cast<uintptr_t>(p), std::max<uint64_t>(bytes, 1));
  *out = static_cast<uint8_t*>(p);
  return true;
}

int Orchestrator::fail(int32_t code, const std::string& message) {
  chip_.fail(*run_, code, message);
  return status();
}

// ---- submit ----------------------------------------------------------------------------

bool Orchestrator::task_quick_ok(const SimplerTaskDesc* d) { return quick_ok_inline(d); }

bool Orchestrator::check_task(const SimplerTaskDesc* d) {
  if (d == nullptr) return fail(SIMPLER_CHIP_ERR_INVALID_ARGS, "submit: desc is null"), false;
  if (d->func_id < 0 || d->func_id > CHIP_MAX_FUNC_ID ||
      program_->kernels[d->func_id].entry == nullptr) {
    std::string ids;
    for (int32_t id : program_->func_ids) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    fail(SIMPLER_CHIP_ERR_KERNEL_NOT_FOUND,
         "submit: func_id " + std::to_string(d->func_id) +
             " is not a child kernel of this callable (its func ids: " +
             (ids.empty() ? "none" : ids) + ")");
    return false;
  }
  auto invalid = [&](const std::string& why) {
    fail(SIMPLER_CHIP_ERR_INVALID_ARGS,
         "submit (func_id " + std::to_string(d->func_id) + "): " + why);
    return false;
  };
  if (d->core_type != SIMPLER_CORE_AIC && d->core_type != SIMPLER_CORE_AIV &&
      d->core_type != SIMPLER_CORE_MIX) {
    return invalid("core_type " + std::to_string(d->core_type) +
                   " is not SIMPLER_CORE_AIC (0), SIMPLER_CORE_AIV (1) or SIMPLER_CORE_MIX (2)");
  }
  if (d->block_num < 1 || d->block_num > kMaxBlockNum) {
    return invalid("block_num " + std::to_string(d->block_num) + " is out of range (1.." +
                   std::to_string(kMaxBlockNum) + ")");
  }
  // A cluster task's blocks are whole clusters, all started together: more than the chip
  // has could never start (it would wait forever, so it is refused here).
  const uint32_t clusters = chip_.clusters.clusters;
  if (d->core_type == SIMPLER_CORE_MIX && d->block_num > clusters) {
    fail(SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE,
         "submit (func_id " + std::to_string(d->func_id) + "): the cluster (MIX) task asks for " +
             std::to_string(d->block_num) + " clusters (" +
             std::to_string(d->block_num * kClusterParts) + " cores: 1 AIC + " +
             std::to_string(SIMPLER_CLUSTER_AIV_CORES) +
             " AIV each, all started together), the chip has " + std::to_string(clusters) +
             " clusters; submit block_num <= " + std::to_string(clusters) +
             ", or split the work into several cluster tasks");
    return false;
  }
  if (d->tensor_count > CHIP_MAX_TENSOR_ARGS || d->scalar_count > CHIP_MAX_SCALAR_ARGS) {
    return invalid(counted(d->tensor_count, "tensor") + " / " + counted(d->scalar_count, "scalar") +
                   " exceed the capacity (" + std::to_string(CHIP_MAX_TENSOR_ARGS) + " each)");
  }
  const LoadedKernel& k = program_->kernels[d->func_id];
  if (k.core_type >= 0 && static_cast<uint32_t>(k.core_type) != d->core_type) {
    const auto name = [](uint32_t c) {
      return c == SIMPLER_CORE_AIC ? "AIC" : c == SIMPLER_CORE_AIV ? "AIV" : "MIX";
    };
    return invalid(std::string("the kernel was compiled for ") +
                   name(static_cast<uint32_t>(k.core_type)) + " cores, the task submits it to " +
                   name(d->core_type) + " (pass SIMPLER_CORE_" +
                   name(static_cast<uint32_t>(k.core_type)) + ")");
  }
  if (d->tensor_count != k.tensor_count || d->scalar_count != k.scalar_count) {
    return invalid("the kernel's signature takes " + counted(k.tensor_count, "tensor") + " and " +
                   counted(k.scalar_count, "scalar") + ", the task passes " +
                   counted(d->tensor_count, "tensor") + " and " +
                   counted(d->scalar_count, "scalar"));
  }
  for (uint32_t i = 0; i < d->tensor_count; ++i) {
    const SimplerTaskTensor& a = d->tensors[i];
    if (a.mode > SIMPLER_TENSOR_NODEP) {
      return invalid("tensor " + std::to_string(i) + ": mode " + std::to_string(a.mode) +
                     " is not a SimplerTensorMode");
    }
    if (!mode_fits(a.mode, k.directions[i])) {
      return invalid("tensor " + std::to_string(i) + ": mode " + mode_name(a.mode) +
                     " does not fit the kernel signature's " + direction_name(k.directions[i]));
    }
    if (k.dtypes[i] != LoadedKernel::kAnyDtype && a.tensor.dtype != k.dtypes[i]) {
      return invalid("tensor " + std::to_string(i) + ": expected dtype " + dtype_text(k.dtypes[i]) +
                     ", given " + dtype_text(a.tensor.dtype));
    }
    if (k.ranks[i] != 0 && a.tensor.ndims != k.ranks[i]) {
      return invalid("tensor " + std::to_string(i) + ": expected rank " +
                     std::to_string(k.ranks[i]) + ", given a tensor of rank " +
                     std::to_string(a.tensor.ndims));
    }
    if (a.mode == SIMPLER_TENSOR_OUT_ALLOC) {
      std::string why;
      uint64_t bytes = 0;
      if (!shape_bytes(a.tensor.ndims, a.tensor.shapes, a.tensor.dtype, &bytes, &why)) {
        return invalid("tensor " + std::to_string(i) + " (OUT_ALLOC): " + why);
      }
    } else if (const uint32_t key = ViewCache::key(a.tensor, d->func_id, i);
               !views_.hit(a.tensor, key) && !keep_view(a.tensor, key)) {
      // The slow path names what is wrong (and asks the driver about a new allocation).
      std::string why;
      if (!check_device_tensor(a.tensor, &why) ||
          !addresses_.contains(a.tensor.buffer.addr, a.tensor.buffer.size, &why)) {
        return invalid("tensor " + std::to_string(i) + ": " + why);
      }
      (void)keep_view(a.tensor, key);  // its allocation is known now
    }
  }
  return true;
}

bool Orchestrator::keep_view(const ChipTensor& t, uint32_t key) {
  if (!device_tensor_quick_ok(t)) return false;
  const AddressCheck::Range* r = addresses_.find(t.buffer.addr, t.buffer.size);
  if (r == nullptr) return false;
  views_.add(t, key, r->begin, r->end);
  return true;
}

int Orchestrator::submit_queued(const SimplerTaskDesc* desc, SimplerTaskResult* result) {
  const LoadedKernel& kernel = program_->kernels[desc->func_id];

  reclaim_front();
  while (head_ - tail_ >= chip_.window) {
    if (!make_room("task window", "task_window_size", SIMPLER_CHIP_ERR_RING_DEADLOCK))
      return status();
  }
  const uint64_t id = head_;
  TaskSlot& task = chip_.slot(id);

  // Tensor descriptors and the kernel's argument vector live in the arena.
  const uint32_t tc = desc->tensor_count;
  const uint32_t argc = tc + desc->scalar_count;
  const uint64_t bytes = tc * sizeof(ChipTensor) + argc * sizeof(int64_t);
  uint64_t offset = 0;
  uint64_t arena_end = 0;
  while (!arena_.try_alloc(bytes == 0 ? kArenaAlignment : bytes, kArenaAlignment, &offset,
                           &arena_end)) {
    if (!make_room("task argument arena", "task_window_size", SIMPLER_CHIP_ERR_RING_DEADLOCK))
      return status();
  }
  auto* tensors = reinterpret_cast<ChipTensor*>(arena_mem_.get() + offset);
  auto* argv = reinterpret_cast<int64_t*>(arena_mem_.get() + offset + tc * sizeof(ChipTensor));
  uint32_t outputs = 0;
  for (uint32_t i = 0; i < tc; ++i) {
    const SimplerTaskTensor& a = desc->tensors[i];
    if (a.mode == SIMPLER_TENSOR_OUT_ALLOC) {
      uint64_t nbytes = 0;
      std::string unused;
      shape_bytes(a.tensor.ndims, a.tensor.shapes, a.tensor.dtype, &nbytes, &unused);
      uint8_t* addr = nullptr;
      if (!heap_alloc(nbytes, &addr)) return status();
      tensors[i] =
          contiguous_device_tensor(addr, nbytes, a.tensor.ndims, a.tensor.shapes, a.tensor.dtype);
      if (result != nullptr) result->outputs[outputs] = tensors[i];
      ++outputs;
    } else {
      tensors[i] = a.tensor;
    }
    argv[i] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&tensors[i]));
  }
  if (desc->scalar_count != 0) {
    std::memcpy(argv + tc, desc->scalars, desc->scalar_count * sizeof(uint64_t));
  }

  // Dependencies: RAW / WAW / WAR from the tensor map; every tensor's lookup is started
  // first, so that their cache misses overlap.
  tmap_.prefetch(tensors, tc);
  deps_.clear();
  for (uint32_t i = 0; i < tc; ++i) {
    const uint32_t mode = desc->tensors[i].mode;
    if (mode == SIMPLER_TENSOR_NODEP) continue;
    while (!tmap_.access(id, tensors[i], access_kind(mode), deps_)) {
      if (!make_room("tensor map", "tensormap_capacity", SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW))
        return status();
    }
  }
  size_t unique = 0;
  for (uint64_t p : deps_) {
    if (p < tail_ || p >= id) continue;  // reclaimed (so completed) or this task itself
    TaskSlot& producer = chip_.slot(p);
    if (producer.dedup_stamp == id) continue;
    producer.dedup_stamp = id;
    deps_[unique++] = p;
    if (options_.observer != nullptr && p >= run_first_)
      options_.observer->on_dependency(p - run_first_, id - run_first_);
  }
  deps_.resize(unique);
  bool ran = false;  // this submit ran a block on this thread (one per submit)
  // TMR: this call releases the latest task. When the new one depends on it and nothing
  // else holds it back, it runs here at once (work-first: its consumer waits for it, so
  // there is nothing to run beside it), before the edges are linked: the new task then
  // finds it completed and links no edge to it, so neither side pays for one.
  if (deferred_ != nullptr && deferred_->dedup_stamp == id) {
    // When its own producer runs on a scheduler and is short, wait for it and run the
    // latest task here, so a chain handed over once comes back to this thread instead of
    // staying split between the two (each later task linking an edge to a producer still
    // running over there: 2-3x the per-task cost).
    const bool take_back =
        producer_running_elsewhere() &&
        (inline_sense_.block_ns() < kTakeBackBlockNs || inline_sense_.stale_after_refusal());
    for (uint32_t i = 0; take_back && i < kTakeBackSpins && producer_running_elsewhere(); ++i)
      cpu_relax();
    if (deferred_->pending.load(std::memory_order_acquire) == 1)
      ran = release_deferred(/*run_here=*/true, take_back);
  }

  task.entry = kernel.entry;
  task.args = argv;
  task.arg_count = argc;
  task.block_num = desc->block_num;
  task.core_type = desc->core_type;
  task.func_id = desc->func_id;
  task.id = id;
  task.run = run_;
  task.next_block.store(0, std::memory_order_relaxed);
  task.blocks_done.store(0, std::memory_order_relaxed);
  task.fanout.store(nullptr, std::memory_order_relaxed);
  task.arena_end = arena_end;
  task.scope_depth = static_cast<uint32_t>(scopes_.size());
  task.scope_serial = scopes_.empty() ? 0 : scopes_.back().serial;
  // The guard plus an upper bound of the edges; the edges that are not linked are
  // subtracted below (the guard keeps the count above zero meanwhile).
  task.pending.store(static_cast<int32_t>(1 + unique), std::memory_order_relaxed);
  int32_t unlinked = 0;
  for (uint64_t p : deps_) {
    if (pool_head_ - pool_tail_ == pool_size_) {
      if (!make_room("dependency pool", "dep_pool_size", SIMPLER_CHIP_ERR_RING_DEADLOCK))
        return status();
    }
    TaskSlot& producer = chip_.slot(p);
    if (p < tail_ || producer.done_id.load(std::memory_order_acquire) == p ||
        !link(producer, task)) {
      ++unlinked;  // already completed
    }
  }
  if (unlinked == static_cast<int32_t>(unique)) {
    // No producer holds an edge to the task: nobody else can see it yet.
    task.pending.store(1, std::memory_order_relaxed);
  } else if (unlinked != 0) {
    task.pending.fetch_sub(unlinked, std::memory_order_acq_rel);
  }
  task.pool_end = pool_head_;

  head_ = id + 1;
  if (options_.observer != nullptr)
    options_.observer->on_task(
        TaskView{id - run_first_, desc->func_id, desc->core_type, desc->block_num});
  if (!options_.build_graph_first) {
    // While nothing else is queued for its core type, running the released task here is
    // what the queue round trip (enqueue, then run_ready_inline pops the oldest) would do,
    // minus the push and the pop. (Released above already when the new task depends on it.)
    if (deferred_ != nullptr)
      ran = release_deferred(/*run_here=*/chip_.ready[deferred_->core_type].looks_empty());
    deferred_ = &task;
  }
  if (result != nullptr) {
    result->task_id = id - run_first_;  // the user's numbering: 0, 1, 2, ... per run
    result->output_count = outputs;
  }
  if (!ran) {
    // No direct run this time: the kept core goes back (another lane may want it, or a
    // queued task of its type).
    dispatcher_.let_go();
    run_ready_inline();  // one block per submit
  }
  return SIMPLER_OK;
}

// Work-first, as libgomp's and oneTBB's task-creating threads: when no scheduler is
// awake to take a ready block, or blocks pile up faster than the awake ones take them,
// the submitting thread runs one itself: no hand-off, no wake-up, no cache line crossing
// cores. One block per submit keeps the queues short without starving the orchestration.
// The watchdog is not polled here (it costs a clock read): the waits poll it.
// Blocks worth a second thread (inline_sense.h) also call a scheduler; long ones are left
// to it: the orchestration goes on submitting while they run, and the awake scheduler and
// this thread share the chip.
void Orchestrator::run_ready_inline() {
  if (!chip_.has_ready()) return;
  // Pipelined: a scheduler runs them while this thread goes on to the next run sooner
  // (it runs blocks only while it waits); its orchestration is what the runs wait for.
  if (options_.pipeline_depth > 1) {
    (void)call_scheduler();
    return;
  }
  if (inline_sense_.shared_blocks() && call_scheduler() && inline_sense_.long_blocks()) return;
  if (!inline_now()) return;
  if (inline_sense_.run([this] { return dispatcher_.run_one(); })) bump_progress();
}

bool Orchestrator::call_scheduler() {
  if (!chip_.awake_room()) return false;
  // A woken scheduler takes tens of µs to start here: one wake-up per such interval, not a
  // system call per submit until it shows up.
  const int64_t now = support::steady_now_ns();
  if (now - called_ns_ >= kSchedulerStartNs) {
    called_ns_ = now;
    chip_.wake_schedulers(1);
  }
  return true;
}

bool Orchestrator::take_released_here() {
  if (options_.pipeline_depth > 1) return false;  // run_ready_inline calls a scheduler
  if (!inline_sense_.shared_blocks()) return inline_now();
  // Long blocks go through the queue (run_ready_inline calls a scheduler for them). A
  // stream of blocks worth a second thread: one is called for the ones to come, and this
  // one still runs here unless an awake scheduler takes it.
  if (!inline_sense_.long_blocks()) {
    (void)call_scheduler();
    if (inline_now()) return true;
  }
  return inline_sense_.stale_after_refusal();  // sent away on the estimate's word
}

// A scheduler that merely spins for work takes a short block only to lose: the hand-off
// costs more than the block, and a chain handed over once stays split between the
// threads (each later task links an edge to a producer still running over there).
// Blocks worth a second thread (inline_sense.h) do go to it.
bool Orchestrator::inline_now() const {
  const int32_t takers =
      inline_sense_.shared_blocks() ? chip_.awake_schedulers() : chip_.working_schedulers();
  return takers == 0 || chip_.ready_depth() >= kInlineDepth;
}

bool Orchestrator::link(TaskSlot& producer, TaskSlot& consumer) {
  Edge& edge = pool_[pool_head_ % pool_size_];
  edge.consumer = &consumer;
  Edge* head = producer.fanout.load(std::memory_order_acquire);
  do {
    if (head == chip_.closed()) return false;  // the producer already completed
    edge.next = head;
  } while (!producer.fanout.compare_exchange_weak(head, &edge, std::memory_order_release,
                                                  std::memory_order_acquire));
  ++pool_head_;
  return true;
}

bool Orchestrator::drop_guard(TaskSlot& task, bool wake, bool run_here, bool take_back) {
  // Only the guard left: every producer already counted itself down (acquire: their
  // completions happen-before), and only this thread adds counts, so nobody else writes
  // `pending` any more and a plain store releases the task.
  bool ready = task.pending.load(std::memory_order_acquire) == 1;
  if (ready) {
    task.pending.store(0, std::memory_order_relaxed);
  } else {
    ready = task.pending.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  if (ready) {
    // Work-first straight from the guard: the task this thread just made ready runs here
    // with no ready-queue round trip, under the same rules as run_ready_inline (short
    // kernels; nobody awake to take it, or the awake ones are behind).
    // The core stays claimed for the next direct run while blocks are short and nothing
    // else of its type is queued (a scheduler could run that on it meanwhile).
    if (run_here && task.block_num == 1 && task.core_type != SIMPLER_CORE_MIX &&
        (take_back || take_released_here()) && inline_sense_.run([&] {
          const bool keep =
              !inline_sense_.shared_blocks() && chip_.ready[task.core_type].looks_empty();
          return dispatcher_.run_now(task, keep);
        })) {
      bump_progress();
      return true;
    }
    chip_.enqueue_ready(task);
    // The orchestrator drains ready tasks itself whenever it waits (help_once), so a
    // parked scheduler is woken only once tasks pile up, and at most once per
    // kWakeStride submits: a futex wake costs microseconds on a small VM.
    if (wake && chip_.ready[task.core_type].size_hint() >= kWakeDepth &&
        head_ >= last_wake_head_ + kWakeStride) {
      last_wake_head_ = head_;
      chip_.wake_schedulers(1);
    }
  }
  return false;
}

bool Orchestrator::release_deferred(bool run_here, bool take_back) {
  if (deferred_ == nullptr) return false;
  TaskSlot* task = deferred_;
  deferred_ = nullptr;
  return drop_guard(*task, true, run_here, take_back);
}

bool Orchestrator::producer_running_elsewhere() const {
  return options_.pipeline_depth == 1 && deferred_->pending.load(std::memory_order_acquire) != 1 &&
         chip_.working_schedulers() > 0;
}

// ---- reclaim and back-pressure -----------------------------------------------------------

bool Orchestrator::reclaim_front() {
  bool any = false;
  while (tail_ < head_ && tail_ != pinned_tail_) {
    TaskSlot& slot = chip_.slot(tail_);
    if (slot.done_id.load(std::memory_order_acquire) != tail_) break;
    if (pinned(slot)) {
      pinned_tail_ = tail_;
      break;
    }
    tmap_.retire(tail_);
    arena_.release_to(slot.arena_end);
    pool_tail_ = slot.pool_end;
    ++tail_;
    any = true;
  }
  if (done_cursor_ < tail_) done_cursor_ = tail_;
  return any;
}

bool Orchestrator::make_room(const char* what, const char* knob, int32_t deadlock_code) {
  if (reclaim_front()) return true;
  if (run_->status.failed()) return false;
  // A host-built graph holds all its guards until it is complete: only the tasks of
  // earlier (pipelined) runs can make room.
  auto over_capacity = [&] {
    const int32_t code = deadlock_code == SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW
                             ? deadlock_code
                             : PTO_RUNTIME_ERR_CAPACITY_EXCEEDED;
    fail(code, std::string("build_graph_first: the ") + what + " is full after " +
                   std::to_string(head_ - run_first_) +
                   " tasks; a host-built graph must fit at once (raise " + knob + ")");
    return false;
  };
  if (building_ && tail_ >= run_first_) return over_capacity();
  release_deferred();
  for (;;) {
    if (reclaim_front()) return true;
    if (run_->status.failed()) return false;
    if (building_ && tail_ >= run_first_) return over_capacity();
    const char* kind = deadlock_code == SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW ? "tensor map overflow"
                                                                            : "ring deadlock";
    if (tail_ == head_) {
      fail(deadlock_code, std::string(kind) + ": the " + what +
                              " cannot hold what a single task needs (raise " + knob + ")");
      return false;
    }
    const TaskSlot& oldest = chip_.slot(tail_);
    if (oldest.done_id.load(std::memory_order_acquire) == tail_) {
      if (!pinned(oldest)) {  // it completed just now: reclaim it
        scopes_changed();     // (never stale, but a stale mark here would loop forever)
        continue;
      }
      fail(deadlock_code,
           std::string(kind) + ": the " + what + " is full and its oldest task (" +
               std::to_string(tail_ - run_first_) +
               ") is pinned by a scope that is still open; a scope " +
               "can hold at most what the ring holds — close scopes sooner or raise " + knob);
      return false;
    }
    // Free a batch, not one slot: one wake-up per batch instead of one per task.
    const uint64_t batch = std::max<uint64_t>(1, chip_.window / 8);
    uint64_t target = std::min(tail_ + batch, head_) - 1;
    if (building_) target = std::min(target, run_first_ - 1);  // an earlier run's task
    wait_for_completion(target, /*stop_on_error=*/true);
  }
}

void Orchestrator::advance_done_cursor() {
  if (done_cursor_ < tail_) done_cursor_ = tail_;
  while (done_cursor_ < head_ &&
         chip_.slot(done_cursor_).done_id.load(std::memory_order_acquire) == done_cursor_) {
    ++done_cursor_;
  }
}

bool Orchestrator::help_once() {
  if (!chip_.has_ready()) return false;
  // The watchdog must still see a kernel that runs too long on this thread: poll before
  // (starts the no-progress interval) and after (before the block counts as progress).
  if (options_.watchdog != nullptr) options_.watchdog->poll();
  // More ready work than the block this thread takes, enough to be worth a wake-up: a
  // parked scheduler runs the rest meanwhile (inline_sense.h).
  if (inline_sense_.shared_blocks()) {
    const uint64_t depth = chip_.ready_depth();
    if (depth >= 2 && static_cast<int64_t>(depth - 1) * inline_sense_.block_ns() >= kLongBlockNs) {
      (void)call_scheduler();
    }
  }
  // Waiting: a cluster task's parts run here too (as fibers, mostly), not on a helper
  // that would first have to wake up while this thread spins.
  chip_.orchestrator_not_waiting();  // a long block here must not read as a stall
  if (!inline_sense_.run([this] { return dispatcher_.run_one(/*waiting=*/true); })) return false;
  if (options_.watchdog != nullptr) options_.watchdog->poll();
  bump_progress();
  return true;
}

void Orchestrator::wait_for_completion(uint64_t id, bool stop_on_error) {
  dispatcher_.let_go();  // what it waits for may need that core
  TaskSlot& slot = chip_.slot(id);
  auto done = [&] {
    return slot.done_id.load(std::memory_order_acquire) == id ||
           (stop_on_error && run_->status.failed());
  };
  // Stamps while it looks for work and finds none (ChipState::orchestrator_stalled); not
  // waiting once it returns, runs a block or parks.
  struct NotWaitingOnReturn {
    ChipState& chip;
    ~NotWaitingOnReturn() { chip.orchestrator_not_waiting(); }
  } not_waiting_on_return{chip_};
  for (;;) {
    Backoff backoff(kOrchestratorSpinBudget);
    for (;;) {
      if (done()) return;
      if (help_once()) {
        backoff = Backoff(kOrchestratorSpinBudget);  // ran a block: a fresh spin budget
        continue;
      }
      chip_.orchestrator_looks(support::steady_now_ns());
      if (!backoff.spin()) break;
    }
    if (chip_.has_ready()) {
      // Ready work this thread cannot take (every core of its type is busy): make sure
      // the schedulers are awake for it, and keep the watchdog looking.
      chip_.wake_schedulers(chip_.max_awake);
      if (options_.watchdog != nullptr) options_.watchdog->poll();
      std::this_thread::yield();
      continue;
    }
    chip_.awaited_task.store(id, std::memory_order_relaxed);
    const uint32_t ticket = chip_.orchestrator_parker.prepare_wait();
    if (done() || chip_.has_ready()) {
      chip_.orchestrator_parker.cancel_wait();
      continue;
    }
    // Parked, this thread runs no kernels: its hardware thread is one more scheduler's
    // meanwhile (a task completing now may release more work than one scheduler runs).
    chip_.orchestrator_not_waiting();  // the raised budget counts it already
    chip_.max_awake.store(chip_.awake_unattended, std::memory_order_relaxed);
    if (options_.watchdog != nullptr) {
      chip_.orchestrator_parker.wait(ticket, options_.watchdog->slice().count());
      options_.watchdog->poll();
    } else {
      chip_.orchestrator_parker.wait(ticket);
    }
    chip_.max_awake.store(chip_.awake_orchestrating, std::memory_order_relaxed);
  }
}

bool Orchestrator::wait_all_done(bool stop_on_error) {
  release_deferred();
  for (;;) {
    advance_done_cursor();
    if (done_cursor_ >= head_) return true;
    if (stop_on_error && run_->status.failed()) return false;
    // Wait for the newest unfinished task first: usually the last to finish, so the
    // whole wait costs one wake-up.
    const uint64_t newest = head_ - 1;
    const bool newest_done = chip_.slot(newest).done_id.load(std::memory_order_acquire) == newest;
    wait_for_completion(newest_done ? done_cursor_ : newest, stop_on_error);
  }
}

// ---- heap ring ---------------------------------------------------------------------------

void Orchestrator::reclaim_heap() {
  advance_done_cursor();
  while (block_tail_ < block_head_) {
    const HeapBlock& b = blocks_[block_tail_ % blocks_.size()];
    if (b.free_after == kOpen || done_cursor_ < b.free_after) break;
    heap_.release_to(b.end);
    ++block_tail_;
  }
}

bool Orchestrator::heap_alloc(uint64_t bytes, uint8_t** out) {
  if (scopes_.empty()) return loose_alloc(bytes, out);
  const uint64_t size =
      (std::max<uint64_t>(bytes, 1) + kHeapAlignment - 1) / kHeapAlignment * kHeapAlignment;
  if (size > heap_.capacity()) {
    fail(building_ ? PTO_RUNTIME_ERR_CAPACITY_EXCEEDED : SIMPLER_CHIP_ERR_RING_DEADLOCK,
         "an allocation of " + std::to_string(bytes) + " bytes can never fit the heap ring of " +
             std::to_string(heap_.capacity()) + " bytes (raise heap_ring_bytes)");
    return false;
  }
  for (;;) {
    reclaim_heap();
    uint64_t offset = 0;
    uint64_t end = 0;
    if (block_head_ - block_tail_ < blocks_.size() &&
        heap_.try_alloc(size, kHeapAlignment, &offset, &end)) {
      blocks_[block_head_ % blocks_.size()] = HeapBlock{end, kOpen};
      ++block_head_;
      *out = heap_base_ + offset;
      return true;
    }
    if (!wait_for_heap()) return false;
  }
}

bool Orchestrator::wait_for_heap() {
  if (run_->status.failed()) return false;
  const HeapBlock& oldest = blocks_[block_tail_ % blocks_.size()];
  // A host-built graph can only wait for blocks that earlier (pipelined) runs free.
  if (block_tail_ == block_head_ || oldest.free_after == kOpen ||
      (building_ && oldest.free_after > run_first_)) {
    const bool capacity = building_;
    fail(capacity ? PTO_RUNTIME_ERR_CAPACITY_EXCEEDED : SIMPLER_CHIP_ERR_RING_DEADLOCK,
         std::string(capacity ? "build_graph_first: " : "ring deadlock: ") + "the heap ring (" +
             std::to_string(heap_.capacity()) + " bytes) is full" +
             (capacity ? "; a host-built graph must fit at once"
                       : " and its oldest allocation belongs to a scope that is still open; "
                         "close scopes sooner") +
             " or raise heap_ring_bytes");
    return false;
  }
  release_deferred();
  // Every task before free_after must finish; the newest of them usually finishes last.
  const uint64_t last = oldest.free_after - 1;
  const bool last_done = chip_.slot(last).done_id.load(std::memory_order_acquire) == last;
  wait_for_completion(last_done ? done_cursor_ : last, /*stop_on_error=*/true);
  return !run_->status.failed();
}

}  // namespace simpler::rt
