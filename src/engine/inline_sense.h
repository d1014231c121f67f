// simpler runtime — how long the blocks the orchestrating thread runs itself take (internal).
//
// Work-first (the orchestrator runs a ready block itself instead of waking a parked
// scheduler) wins while kernels are short: a futex wake-up costs microseconds on a small
// VM. With long kernels it serializes the chip: while the orchestrator is inside a 100 µs
// kernel, the next ready task waits for it although a parked scheduler could run it on
// the other hardware thread (the decoder prefill ran at the serial floor on 2 threads).
// The orchestrator therefore times one inline block in kSampleEvery (two clock reads per
// eight blocks) and, while the last sampled block was long, hands ready work to a
// scheduler (waking one) instead of taking it first.
#pragma once

#include <cstdint>

#include "support/clock.h"

namespace simpler::rt {

// A block at least this long is worth a wake-up (a futex wake plus the woken thread's
// start is a few to tens of microseconds here).
inline constexpr int64_t kLongBlockNs = 10'000;

class InlineSense {
 public:
  // Runs one block through `run_block` (returns whether it ran one), timing a sample.
  template <class RunBlock>
  bool run(RunBlock&& run_block) {
    if ((count_++ & (kSampleEvery - 1)) != 0) return run_block();
    const int64_t start = support::steady_now_ns();
    const bool ran = run_block();
    if (ran) long_blocks_ = support::steady_now_ns() - start >= kLongBlockNs;
    return ran;
  }
  // The last sampled inline block took at least kLongBlockNs.
  bool long_blocks() const { return long_blocks_; }

 private:
  static constexpr uint32_t kSampleEvery = 8;  // a power of two
  uint32_t count_ = 0;
  bool long_blocks_ = false;
};

}  // namespace simpler::rt
