// Futex-backed parking for Parker.
#include "parker.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace simpler::rt {
namespace {

uint32_t* futex_word(std::atomic<uint32_t>& a) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  return reinterpret_cast<uint32_t*>(&a);
}

}  // namespace

void Parker::wait(uint32_t ticket, int64_t timeout_ns) {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
    tsp = &ts;
  }
  // EAGAIN (the epoch moved on), EINTR and ETIMEDOUT all mean "look again".
  syscall(SYS_futex, futex_word(epoch_), FUTEX_WAIT_PRIVATE, ticket, tsp, nullptr, 0);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void Parker::wake(int count) {
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, futex_word(epoch_), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

}  // namespace simpler::rt
