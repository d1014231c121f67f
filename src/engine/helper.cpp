// The orchestrator's helping path: run ready blocks on borrowed idle cores.
#include "helper.h"

namespace simpler::rt {

bool Helper::run_one() {
  const uint32_t first = next_type_;
  next_type_ ^= 1u;
  return run_one(first) || run_one(first ^ 1u);
}

bool Helper::run_one(uint32_t type) {
  if (chip_.ready[type].looks_empty()) return false;
  uint32_t core = 0;
  if (!borrow_core(type, &core)) return false;
  TaskSlot* task = chip_.ready[type].try_pop();
  if (task == nullptr) {
    chip_.release_core(type, core);
    return false;
  }
  const uint32_t block = claim_block(chip_, *task);
  run_block(chip_, *task, block, type, core, kLane);
  chip_.release_core(type, core);
  ++blocks_;
  finish_block(chip_, *task);
  return true;
}

bool Helper::borrow_core(uint32_t type, uint32_t* id) {
  const uint32_t count = chip_.core_count[type];
  // Start from the highest ids: schedulers hand out their cores round-robin from the lowest.
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t candidate = count - 1 - (next_core_[type]++ % count);
    if (chip_.claim_core(type, candidate)) {
      *id = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace simpler::rt
