// Fork epoch and the process-lifetime pin list.
#include "process_guards.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "simpler/worker/chip_worker.h"

namespace simpler {
namespace {

std::atomic<uint64_t> g_fork_epoch{0};

void on_fork_child() { g_fork_epoch.fetch_add(1, std::memory_order_relaxed); }

struct ForkHookRegistration {
  ForkHookRegistration() { pthread_atfork(nullptr, nullptr, &on_fork_child); }
};
const ForkHookRegistration g_fork_hook;

struct PinList {
  std::mutex mu;
  std::vector<std::unique_ptr<ChipWorker>> chips;
};
// Deliberately never destroyed: a pinned context must outlive every static destructor.
PinList& pins() {
  static PinList* list = new PinList();
  return *list;
}

}  // namespace

uint64_t fork_epoch() noexcept { return g_fork_epoch.load(std::memory_order_relaxed); }

void pin_for_process_lifetime(std::unique_ptr<ChipWorker> chip) noexcept {
  if (!chip) return;
  std::lock_guard lock(pins().mu);
  try {
    pins().chips.push_back(std::move(chip));
  } catch (...) {
    (void)chip.release();  // out of memory: leaking is the pin's intent anyway
  }
}

size_t pinned_chip_worker_count() noexcept {
  std::lock_guard lock(pins().mu);
  return pins().chips.size();
}

}  // namespace simpler
