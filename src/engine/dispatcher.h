// simpler runtime — the one dispatch loop (internal).
//
// Every thread that runs kernels does it through a Dispatcher: the scheduler threads in
// their loop and the orchestrator (the caller of Engine::execute) when it submits or
// waits (work-first, as libgomp's and oneTBB's task-creating threads do). One step takes a
// ready task of a core type, claims an idle core of that type (ChipState::claim_core: a
// core never runs two blocks at once), takes one block of the task, runs the kernel as
// that core (SimplerKernelContext, observer lane), releases the core and completes the
// block. Lanes search the cores from different starting points, so concurrent lanes
// rarely contend on one claim flag.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "block_runner.h"
#include "chip_state.h"

namespace simpler::rt {

class Dispatcher {
 public:
  // `lane`: the thread's observer lane (0: the caller of execute(), 1..: schedulers);
  // `first_core`: per core type, where this lane starts looking for an idle core.
  Dispatcher(ChipState& chip, uint32_t lane, std::array<uint32_t, kCoreTypeCount> first_core);

  // Runs one ready block of either core type (alternating which type goes first). False
  // when none could be taken: both queues empty, or every core of a ready type claimed.
  // `waiting`: the orchestrating thread waits for completions, with nothing to submit
  // meanwhile, so it runs a cluster task's parts itself as a scheduler would; submitting,
  // it hands them to helper threads and goes on.
  bool run_one(bool waiting = false);
  // Work-first without the queue: runs `task` now, as an idle core of its type, and
  // completes it. For a single-block AIC/AIV task this thread has just made ready (its
  // last dependency released) and nobody else can see yet. False when every core of the
  // type is busy: the caller queues the task instead.
  // `keep`: the lane keeps the core claimed afterwards, so that its next direct run needs
  // no claim and release (two locked instructions, ~12 ns, a fifth of a chain task); the
  // kept core counts as busy to everyone else. A cluster reservation that marks it
  // (kCoreBusyReserved) gets it at this lane's next run_now or let_go.
  bool run_now(TaskSlot& task, bool keep = false);
  // run_now without the completion: for a task that nobody else can see or wait for (the
  // orchestrator's immediate run: no window slot, no fanout, no done_id). `argv`: the
  // kernel's arguments at argv + 1, built for this block (run_block_in_place); task.args
  // is not read. task.next_block is the caller's (nobody takes a block of such a task).
  // Inline while the core this lane kept is still its own (a chain of immediate tasks):
  // no claim, no frame; a claim (or a hand-over to a cluster reservation) out of line.
  [[gnu::always_inline]] bool run_alone(TaskSlot& task, int64_t* argv, bool keep) {
    const uint32_t type = task.core_type;
    const uint32_t core = kept_[type];
    if (!keep || core == kNoCore ||
        chip_.core_claimed[type][core].load(std::memory_order_relaxed) != kCoreBusy) [[unlikely]] {
      return run_alone_claiming(task, argv, keep);
    }
    run_block_in_place(chip_, task, 0, type, core, lane_, argv);
    count_block();
    return true;
  }
  // Frees the cores run_now kept: before this lane waits, runs queued work, or leaves.
  void let_go();
  uint64_t blocks() const { return blocks_.load(std::memory_order_relaxed); }  // any thread

 private:
  bool run_one(uint32_t type);
  // run_alone without a kept core of the type (or with one a reservation marked): claims one.
  // `argv` null: run_block copies task.args (run_now).
  [[gnu::noinline]] bool run_alone_claiming(TaskSlot& task, int64_t* argv, bool keep);
  bool claim_core(uint32_t type, uint32_t* id);
  void run_claimed(TaskSlot& task, uint32_t block, uint32_t type, uint32_t core);
  void count_block() {  // only this lane writes blocks_
    blocks_.store(blocks_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  ChipState& chip_;
  uint32_t lane_;
  bool orchestrating_;  // lane 0: the caller of execute() (complete() need not wake it)
  uint32_t next_type_ = 0;
  uint32_t next_core_[kCoreTypeCount];
  static constexpr uint32_t kNoCore = ~0u;
  uint32_t kept_[kCoreTypeCount] = {kNoCore, kNoCore};  // run_now(keep): still claimed
  std::atomic<uint64_t> blocks_{0};                     // finished by this lane (watchdog progress)
};

}  // namespace simpler::rt
