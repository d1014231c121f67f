// The scheduler loop: dispatch to core mailboxes, execute, harvest, complete.
#include "scheduler.h"

#include "backoff.h"

namespace simpler::rt {

Scheduler::Scheduler(ChipState& chip, uint32_t lane, int32_t first_cluster, int32_t cluster_count)
    : chip_(chip),
      lane_(lane),
      cores_(std::make_unique<Core[]>(static_cast<size_t>(cluster_count) * 3)) {
  size_t n = 0;
  for (int32_t c = first_cluster; c < first_cluster + cluster_count; ++c) {
    Core& aic = cores_[n++];
    aic.type = SIMPLER_CORE_AIC;
    aic.id = static_cast<uint32_t>(c);
    by_type_[SIMPLER_CORE_AIC].push_back(&aic);
    for (int k = 0; k < 2; ++k) {
      Core& aiv = cores_[n++];
      aiv.type = SIMPLER_CORE_AIV;
      aiv.id = static_cast<uint32_t>(2 * c + k);
      by_type_[SIMPLER_CORE_AIV].push_back(&aiv);
    }
  }
}

void Scheduler::run() {
  while (!chip_.shutdown.load(std::memory_order_acquire)) {
    if (!step()) idle();
  }
}

bool Scheduler::step() {
  Core* posted[kCoreTypeCount];
  int count = 0;
  for (int k = 0; k < kCoreTypeCount; ++k) {
    const uint32_t type = (first_type_ + static_cast<uint32_t>(k)) % kCoreTypeCount;
    if (by_type_[type].empty() || chip_.ready[type].looks_empty()) continue;
    Core* core = claim_idle_core(type);
    if (core == nullptr) continue;  // the helping orchestrator borrowed them all
    TaskSlot* task = chip_.ready[type].try_pop();
    if (task == nullptr) {
      chip_.release_core(type, core->id);
      continue;
    }
    post(*core, *task, claim_block(chip_, *task));
    posted[count++] = core;
  }
  first_type_ ^= 1u;
  for (int i = 0; i < count; ++i) execute(*posted[i]);
  for (int i = 0; i < count; ++i) harvest(*posted[i]);
  return count > 0;
}

Scheduler::Core* Scheduler::claim_idle_core(uint32_t type) {
  std::vector<Core*>& cores = by_type_[type];
  for (size_t i = 0; i < cores.size(); ++i) {
    Core& c = *cores[round_robin_[type]++ % cores.size()];
    if (chip_.claim_core(type, c.id)) return &c;
  }
  return nullptr;
}

void Scheduler::post(Core& core, TaskSlot& task, uint32_t block_idx) {
  core.mailbox.task = &task;
  core.mailbox.block_idx = block_idx;
  core.mailbox.state.store(kAssigned, std::memory_order_release);
}

void Scheduler::execute(Core& core) {
  Mailbox& box = core.mailbox;
  if (box.state.load(std::memory_order_acquire) != kAssigned) return;
  box.state.store(kRunning, std::memory_order_relaxed);  // acknowledge
  run_block(chip_, *box.task, box.block_idx, core.type, core.id, lane_);
  box.state.store(kDone, std::memory_order_release);  // signal completion
}

void Scheduler::harvest(Core& core) {
  Mailbox& box = core.mailbox;
  if (box.state.load(std::memory_order_acquire) != kDone) return;
  TaskSlot& task = *box.task;
  box.task = nullptr;
  box.state.store(kIdle, std::memory_order_relaxed);
  chip_.release_core(core.type, core.id);
  finished_blocks_.store(finished_blocks_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  finish_block(chip_, task);
}

bool Scheduler::has_work() const {
  for (int type = 0; type < kCoreTypeCount; ++type) {
    if (!by_type_[type].empty() && !chip_.ready[type].looks_empty()) return true;
  }
  return false;
}

void Scheduler::idle() {
  Backoff backoff(kSchedulerSpinBudget);
  while (backoff.spin()) {
    if (has_work() || chip_.shutdown.load(std::memory_order_relaxed)) return;
  }
  const uint32_t ticket = chip_.scheduler_parker.prepare_wait();
  if (has_work() || chip_.shutdown.load(std::memory_order_acquire)) {
    chip_.scheduler_parker.cancel_wait();
    return;
  }
  chip_.scheduler_parker.wait(ticket);
}

}  // namespace simpler::rt
