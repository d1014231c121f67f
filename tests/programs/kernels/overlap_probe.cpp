// Kernel overlap_probe: counts how many of its blocks run at once. c[0] is the number
// running now, c[1] the most seen so far (int32, updated atomically, so the tasks pass c as
// NODEP and stay independent); each block sleeps `ms` milliseconds while counted, or,
// when `ms` is negative, busy-waits -ms microseconds (a short kernel: a sleep that short
// would take the timer slack, ~50 µs, instead).
// Signature [INOUT c (int32, >= 2 elements), SCALAR ms (i64)].
#include <chrono>
#include <thread>

#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* c = simpler_tensor_arg(args, 0);
  int32_t* counts = test_kernels::base<int32_t>(*c) + c->start_offset;
  const int32_t now = __atomic_add_fetch(&counts[0], 1, __ATOMIC_SEQ_CST);
  int32_t most = __atomic_load_n(&counts[1], __ATOMIC_SEQ_CST);
  while (now > most && !__atomic_compare_exchange_n(&counts[1], &most, now, false, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_SEQ_CST)) {
  }
  const int64_t ms = simpler_scalar_i64(args, 1);
  if (ms >= 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  } else {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(-ms);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  __atomic_sub_fetch(&counts[0], 1, __ATOMIC_SEQ_CST);
}
