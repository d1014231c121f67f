// simpler runtime — the orchestrator side of a run (internal).
//
// Runs the orchestration entry and implements the SimplerOrchApi it calls: validates
// tasks, infers their dependencies through the TensorMap, links them into producers'
// fanout lists, and manages the rings:
//   task window   slots of in-flight tasks (ChipState::slots)
//   arg arena     host bytes for each task's tensor descriptors and kernel args
//   dep pool      dependency edges
//   heap ring     device memory for OUT_ALLOC outputs and alloc_tensor
// All are reclaimed in order. A task slot (with its arena bytes, edges and tensor-map
// entries) is reclaimed once the task completed and the scope it was submitted in (if
// any) closed. A heap block is freed once its scope closed and every task submitted
// before that completed. Allocations outside any scope live until the run ends; they come
// from the device allocator instead of the ring, so they never pin the ring. When a ring is full
// the orchestrator waits for the oldest task (back-pressure); when the oldest occupant is pinned by
// a scope that is still open the run fails with SIMPLER_CHIP_ERR_RING_DEADLOCK
// (SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW for the tensor map) instead of hanging.
//
// TMR: the most recently submitted task keeps its release guard until the next API call,
// so add_dependency(before, latest) can still add an edge; an older task can still get one
// while it waits for a producer (add_dependency holds it by its pending count). HBG
// (build_graph_first): every task keeps its guard until the orchestration returned; a ring that
// fills up during the build is PTO_RUNTIME_ERR_CAPACITY_EXCEEDED (the tensor map:
// TENSORMAP_OVERFLOW).
//
// Used by one thread at a time: the caller of Engine::execute (both modes).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "address_check.h"
#include "byte_ring.h"
#include "chip_state.h"
#include "dispatcher.h"
#include "inline_sense.h"
#include "loaded_program.h"
#include "observer.h"
#include "simpler/orch/orchestration_api.h"
#include "tensor_map.h"
#include "view_cache.h"
#include "watchdog.h"

namespace simpler::rt {

struct OrchestratorSizes {
  int32_t device = 0;            // tensors must lie in allocations of this device
  uint8_t* heap_base = nullptr;  // device memory, heap_bytes long, 1024-byte aligned
  uint64_t heap_bytes = 0;
  uint64_t arena_bytes = 0;
  uint64_t dep_pool_size = 0;
  uint64_t tensormap_capacity = 0;
};

struct RunOptions {
  bool build_graph_first = false;
  RunObserver* observer = nullptr;        // sees submits and dependencies when not null
  RunObserver* block_observer = nullptr;  // stored in ChipState::observer once the run starts
  // 1: the run starts on an idle chip (earlier runs drained) and run() returns when its
  // tasks finished. D > 1 (pipelined): it starts once at most D - 1 earlier runs are still
  // executing, and run() returns when the orchestration did; `on_done` completes it.
  uint32_t pipeline_depth = 1;
  bool next_follows = false;  // pipelined: the caller orchestrates the next run at once
  RunDone on_done;
  bool debug_log = false;
  bool timed = false;  // measure orchestration_ns() (diagnostics only: two clock reads)
  Watchdog* watchdog =
      nullptr;  // polled while waiting (the caller of execute() is the orchestrator)
};

class Orchestrator;
// The C function table an orchestration receives; rt = the orchestrator (orch_api.cpp).
SimplerOrchApi make_orch_api(Orchestrator* orchestrator);

class Orchestrator {
 public:
  Orchestrator(ChipState& chip, const OrchestratorSizes& sizes);
  Orchestrator(const Orchestrator&) = delete;
  Orchestrator& operator=(const Orchestrator&) = delete;

  // Between runs (caller thread). Returns the run's track (its status; run_track.h).
  RunTrack* begin_run(const LoadedProgram::Impl& program, const RunOptions& options);
  // Waits for earlier runs as the pipeline depth says, runs the orchestration, releases
  // the graph; not pipelined: waits until every task completed and resets the rings.
  // The run's status is in its track.
  void run(const ChipStorageTaskArgs& args);
  // Between runs: waits for every run in flight and resets the rings.
  void drain_idle() {
    run_ = &spare_track_;
    drain();
  }
  // begin_run was not followed by run() (the run could not start): frees its track.
  void abort_run();

  uint64_t progress() const { return progress_.load(std::memory_order_relaxed); }
  uint64_t tasks_submitted() const { return head_ - run_first_; }
  int64_t orchestration_ns() const { return orchestration_ns_; }
  int64_t orchestration_start_ns() const { return orchestration_start_ns_; }  // steady clock

  // ---- SimplerOrchApi (orch_api.cpp wires the C table to these) ----
  int submit(const SimplerTaskDesc* desc, SimplerTaskResult* result);  // submit_path.h: inline
  int scope_begin();
  int scope_end();
  int alloc_tensor(uint32_t ndims, const int64_t* shapes, uint32_t dtype, ChipTensor* out);
  int add_dependency(uint64_t before, uint64_t after);
  int read_value(const ChipTensor* t, int64_t index, void* out, size_t size);
  int write_value(const ChipTensor* t, int64_t index, const void* in, size_t size);
  int fatal(const char* message);
  void log(int32_t level, const char* message);
  int fail(int32_t code, const std::string& message);  // latches, returns the latched code

 private:
  friend class ValidateTaskTest;          // tests/engine: task_quick_ok against check_task
  friend class OrchestratorImmediateRun;  // tests/engine: which path a task took
  friend class OrchestratorScopeReclaim;  // tests/engine: the window's occupancy
  friend class OrchestratorTakeBack;      // tests/engine: a long block-time estimate
  struct ScopeFrame {
    uint64_t serial;
    uint64_t first_block;  // heap-block index at scope_begin
  };
  struct HeapBlock {
    uint64_t end;         // heap-ring position released with this block
    uint64_t free_after;  // kOpen until its scope closes, then the next task id at that time
  };
  static constexpr uint64_t kOpen = ~uint64_t{0};

  // Every check of a submitted task; false: the run failed with a typed message. Inline
  // in submit with task_quick_ok's body (submit is the only frame an immediate task sets up).
  bool validate_task(const SimplerTaskDesc* desc);
  bool task_quick_ok(const SimplerTaskDesc* desc);    // the common case, no message
  bool quick_ok_inline(const SimplerTaskDesc* desc);  // task_quick_ok's body
  // All checks, naming what is wrong (out of line: the submit path inlines the rest).
  [[gnu::noinline]] bool check_task(const SimplerTaskDesc* desc);
  // `t` passes the quick checks (device_tensor_quick_ok, a known allocation): kept in
  // views_ under `key` (ViewCache::key) for the next task; false: the slow path.
  bool keep_view(const ChipTensor& t, uint32_t key);
  bool heap_alloc(uint64_t bytes, uint8_t** out);
  bool loose_alloc(uint64_t bytes, uint8_t** out);
  static void free_loose(std::vector<void*>& blocks);
  bool wait_for_heap();
  void reclaim_heap();
  bool reclaim_front();
  bool make_room(const char* what, const char* knob, int32_t deadlock_code);
  // Submitted in a scope that is still open (its serial is on the stack at its depth).
  bool pinned(const TaskSlot& slot) const {
    return slot.scope_depth != 0 && slot.scope_depth <= scopes_.size() &&
           scopes_[slot.scope_depth - 1].serial == slot.scope_serial;
  }
  // Every scope_end or scope clear: the oldest task may no longer be pinned.
  void scopes_changed() { pinned_tail_ = 0; }
  bool link(TaskSlot& producer, TaskSlot& consumer);
  int link_dependency(uint64_t before, uint64_t after, TaskSlot& consumer);
  bool value_access(const char* api, const ChipTensor* t, int64_t index, const void* buf,
                    size_t size, bool write, uint8_t** addr);
  bool wait_for_accessors(const ChipTensor& t, AccessKind kind);
  bool wait_all_done(bool stop_on_error);
  void wait_for_completion(uint64_t id, bool stop_on_error);
  bool help_once();
  void run_ready_inline();
  bool inline_now() const;  // the work-first rule: run a ready block on this thread now?
  // Wakes a parked scheduler while the awake budget has room (at most one per
  // kSchedulerStartNs); true when one is woken or on its way, false when the budget is full.
  bool call_scheduler();
  // May the task a submit just released run on this thread at once (work-first)?
  bool take_released_here();
  void advance_done_cursor();
  // `run_here` (a submit): the released task may run on this thread at once (work-first,
  // under the rules of run_ready_inline); true when it did.
  // `take_back`: it runs here although a scheduler is awake (its producer just finished
  // there: the chain comes back to this thread).
  bool release_deferred(bool run_here = false, bool take_back = false);
  bool drop_guard(TaskSlot& task, bool wake, bool run_here = false, bool take_back = false);
  // The immediate run (immediate_run.cpp): a task submitted while nothing is in flight
  // runs at once on this thread, with no slot, arena, tensor-map entry, edge or release.
  // False when it may not (the caller takes the queued path), or could not start.
  bool run_immediately(const SimplerTaskDesc* desc, SimplerTaskResult* result);
  // submit() after validation when the task does not run at once: the window slot, arena
  // copy, inference and edges. Its own function, out of line, so that the immediate path
  // does not set up its frame.
  [[gnu::noinline]] int submit_queued(const SimplerTaskDesc* desc, SimplerTaskResult* result);
  bool immediate_allowed(const SimplerTaskDesc* desc, const LoadedKernel& kernel);
  // immediate_allowed with tasks in flight: a chain one task behind catches up (runs its
  // held task's queued producer, then the held task) when work-first would run them here.
  [[gnu::noinline]] bool catch_up();
  // The run's mode allows it and no scope is open (its tasks are pinned): checked inline
  // at the submit, so a scoped task pays no call for the immediate path.
  bool immediate_possible() const { return immediate_mode_ && scopes_.empty(); }
  // add_dependency(before, after) where `after` is the latest task and ran immediately.
  bool ran_immediately(uint64_t after) const {
    return immediate_.id == after && after + 1 == head_;
  }
  // The latest task waits for a producer a scheduler runs now (taken back when blocks are
  // very short, or the estimate is stale: InlineSense::stale_after_refusal).
  bool producer_running_elsewhere() const;
  void finish();
  void release_graph();
  void reset_rings();
  void end_pipelined();
  void start_ids();
  void wait_runs_below(uint32_t limit);
  void collect_finished();
  void drain();  // waits for every earlier run in flight, resets the rings
  void bump_progress() {
    progress_.store(progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  int status() const { return run_->status.code(); }

  ChipState& chip_;
  Dispatcher dispatcher_;     // lane 0: ready blocks this thread runs itself (work-first)
  InlineSense inline_sense_;  // how long those blocks take: long ones go to a scheduler
  TensorMap tmap_;
  AddressCheck addresses_;
  ViewCache views_;       // DEVICE views validate_task accepted while addresses_ still holds
  SimplerOrchApi api_{};  // rebuilt for every run: an orchestration may have scribbled on it

  // Task ids are unique for the engine's lifetime: slot = id & window_mask.
  uint64_t head_ = 1;         // next id to submit
  uint64_t tail_ = 1;         // oldest id not reclaimed
  uint64_t done_cursor_ = 1;  // every id below completed
  uint64_t run_first_ = 1;    // first id of this run
  // tail_ when reclaim_front found it pinned by an open scope (0: none): only a scope that
  // ends unpins it (scopes_changed), so until then reclaim_front stops at one compare.
  uint64_t pinned_tail_ = 0;
  TaskSlot* deferred_ = nullptr;  // TMR: the latest task, guard still held
  bool immediate_mode_ = false;   // this run may take the immediate path (set by begin_run)
  TaskSlot immediate_;            // the task run_immediately runs (never in the window)
  ChipTensor immediate_tensors_[CHIP_MAX_TENSOR_ARGS];  // its descriptors: the kernel's copy
  int64_t immediate_argv_[1 + CHIP_MAX_SIGNATURE];      // [0]: the block's context, then its args
  uint64_t last_wake_head_ = 0;  // head_ when a submit last woke a parked scheduler
  int64_t called_ns_ = 0;        // when call_scheduler last woke one

  ByteRing arena_;
  std::unique_ptr<uint8_t[]> arena_mem_;
  std::unique_ptr<Edge[]> pool_;
  uint64_t pool_size_ = 0;
  uint64_t pool_head_ = 0;
  uint64_t pool_tail_ = 0;
  uint8_t* heap_base_ = nullptr;
  ByteRing heap_;
  std::vector<HeapBlock> blocks_;
  uint64_t block_head_ = 0;
  uint64_t block_tail_ = 0;
  std::vector<ScopeFrame> scopes_;
  // Scope-less runtime allocations of this run: device-allocator blocks (not heap-ring
  // blocks, so they never keep the ring from reclaiming scoped blocks), freed at run end.
  std::vector<void*> loose_;
  int32_t device_ = 0;
  uint64_t next_scope_serial_ = 1;

  // A pipelined run's uncounted completions: more than any run submits, so the count only
  // reaches zero after the orchestration dropped its guard (end_pipelined).
  static constexpr int64_t kUncounted = int64_t{1} << 62;
  RunTrack* run_ = &spare_track_;  // the run being orchestrated (never null)
  RunTrack spare_track_;
  bool drained_ = true;  // no earlier run in flight, rings and tensor map empty

  const LoadedProgram::Impl* program_ = nullptr;
  RunOptions options_{};
  bool building_ = false;  // HBG: inside the orchestration entry
  std::vector<uint64_t> deps_;
  std::atomic<uint64_t> progress_{0};
  int64_t orchestration_ns_ = 0;
  int64_t orchestration_start_ns_ = 0;
};

}  // namespace simpler::rt
