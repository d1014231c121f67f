// The one dispatch loop: ready queue -> idle core of the type -> kernel -> completion.
#include "dispatcher.h"

#include "block_runner.h"
#include "cluster_dispatch.h"

namespace simpler::rt {

Dispatcher::Dispatcher(ChipState& chip, uint32_t lane,
                       std::array<uint32_t, kCoreTypeCount> first_core)
    : chip_(chip), lane_(lane), orchestrating_(lane == 0) {
  for (int type = 0; type < kCoreTypeCount; ++type) {
    const uint32_t count = chip.core_count[type];
    next_core_[type] = count == 0 ? 0 : first_core[type] % count;
  }
}

bool Dispatcher::run_one(bool waiting) {
  // A cluster task first: it reserves its clusters; a scheduler (or the orchestrating
  // thread while it waits) runs the first part itself, the submitting orchestrating
  // thread hands every part to helper threads and goes on.
  if (!chip_.ready[SIMPLER_CORE_MIX].looks_empty() &&
      start_cluster_task(chip_, orchestrating_ && !waiting ? nullptr : &lane_, orchestrating_)) {
    return true;
  }
  const uint32_t first = next_type_;
  next_type_ ^= 1u;
  return run_one(first) || run_one(first ^ 1u);
}

bool Dispatcher::run_one(uint32_t type) {
  if (chip_.ready[type].looks_empty()) return false;
  uint32_t core = 0;
  if (!claim_core(type, &core)) return false;
  TaskSlot* task = chip_.ready[type].try_pop();
  if (task == nullptr) {
    release_core(chip_, type, core);
    return false;
  }
  const uint32_t block = claim_block(chip_, *task);
  // An SPMD task's blocks spread over the cores (as the chip would run them): this lane's
  // next block starts the search at the next core.
  if (task->block_num > 1) next_core_[type] = core + 1 == chip_.core_count[type] ? 0 : core + 1;
  run_claimed(*task, block, type, core);
  return true;
}

bool Dispatcher::run_now(TaskSlot& task, bool keep) {
  if (!run_alone_claiming(task, nullptr, keep)) return false;
  complete_task(chip_, task, orchestrating_, /*on_dispatcher=*/true);  // no block count
  return true;
}

bool Dispatcher::run_alone_claiming(TaskSlot& task, int64_t* argv, bool keep) {
  const uint32_t type = task.core_type;
  uint32_t core = kept_[type];
  kept_[type] = kNoCore;
  // A kept core is still this lane's unless a cluster reservation marked it meanwhile:
  // then it is handed over now (release_core), and another one is claimed.
  if (core != kNoCore &&
      chip_.core_claimed[type][core].load(std::memory_order_relaxed) != kCoreBusy) {
    release_core(chip_, type, core);
    core = kNoCore;
  }
  if (core == kNoCore && !claim_core(type, &core)) return false;
  task.next_block.store(1, std::memory_order_relaxed);  // its only block: taken
  if (argv != nullptr) {
    run_block_in_place(chip_, task, 0, type, core, lane_, argv);
  } else {
    run_block(chip_, task, 0, type, core, lane_);
  }
  if (keep) {
    kept_[type] = core;
  } else {
    release_core(chip_, type, core);
  }
  count_block();
  return true;
}

void Dispatcher::let_go() {
  for (uint32_t type = 0; type < kCoreTypeCount; ++type) {
    if (kept_[type] == kNoCore) continue;
    release_core(chip_, type, kept_[type]);
    kept_[type] = kNoCore;
  }
}

// Runs one block of `task` as `core` (claimed by this lane), then frees the core and
// completes the block: run_one's tail.
void Dispatcher::run_claimed(TaskSlot& task, uint32_t block, uint32_t type, uint32_t core) {
  run_block(chip_, task, block, type, core, lane_);
  release_core(chip_, type, core);
  count_block();
  finish_block(chip_, task, orchestrating_);
}

// Starts at the core this lane claimed last: its claim word stays in this thread's cache
// (a lane runs one block at a time, so that core is usually free again), and the search
// moves on only when another lane holds it (or after an SPMD block, see run_one).
bool Dispatcher::claim_core(uint32_t type, uint32_t* id) {
  const uint32_t count = chip_.core_count[type];
  uint32_t candidate = next_core_[type];
  if (count == 0) return false;
  if (chip_.claim_core(type, candidate)) {  // the common case: no search
    *id = candidate;
    return true;
  }
  for (uint32_t i = 1; i < count; ++i) {
    candidate = candidate + 1 == count ? 0 : candidate + 1;
    if (chip_.claim_core(type, candidate)) {
      next_core_[type] = candidate;
      *id = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace simpler::rt
