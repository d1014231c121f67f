// simpler runtime — how long the blocks the orchestrating thread runs itself take (internal).
//
// Work-first (the orchestrator runs a ready block itself instead of waking a parked
// scheduler) wins while kernels are short: a futex wake-up costs microseconds on a small
// VM. With longer kernels it serializes the chip: while the orchestrator is inside a
// kernel, the next ready task waits for it although a parked scheduler could run it on
// the other hardware thread (the decoder prefill ran at the serial floor on 2 threads;
// the decode loop's 4 µs kernels kept one thread busy of two).
// The orchestrator therefore times one inline block in kSampleEvery (two clock reads per
// eight blocks; one in kSampleEveryShort while blocks are shorter than kTakeBackBlockNs:
// there the two reads, ~40 ns, were 10 % of an empty task's time) and estimates the
// block time as the median of the last three samples: a sample stretched by preemption,
// or one short kernel among long ones (a residual add among matmul tiles), does not flip
// the policy on its own.
#pragma once

#include <algorithm>
#include <cstdint>

#include "support/clock.h"

namespace simpler::rt {

// A block at least this long is worth a wake-up by itself (a futex wake plus the woken
// thread's start is a few to tens of microseconds here): the orchestrator hands it to a
// scheduler instead of running it, and goes on submitting.
inline constexpr int64_t kLongBlockNs = 10'000;
// Blocks at least this long are worth a second thread: handing a block to an awake
// scheduler costs a few cache-line transfers (well under a microsecond), so from here on
// the orchestrator keeps a scheduler awake while it submits, and both threads run blocks.
// Shorter ones (empty kernels, bench/task_overhead) run work-first on this thread.
inline constexpr int64_t kSharedBlockNs = 2'000;
// Blocks so short that a hand-off costs more than the block (a few cache-line transfers):
// a submit waits for such a producer running on a scheduler and runs the chain on here.
inline constexpr int64_t kTakeBackBlockNs = 300;

class InlineSense {
 public:
  // Runs one block through `run_block` (returns whether it ran one), timing a sample.
  template <class RunBlock>
  bool run(RunBlock&& run_block) {
    if ((count_++ & sample_mask_) != 0) return run_block();
    const int64_t start = support::steady_now_ns();
    const bool ran = run_block();
    if (ran) record(support::steady_now_ns() - start);
    return ran;
  }
  // The estimated block time (ns): the median of the last three samples, 0 before any.
  int64_t block_ns() const { return estimate_; }
  // Blocks are long enough to wake a scheduler for any one of them.
  bool long_blocks() const { return estimate_ >= kLongBlockNs; }
  // Blocks are long enough that a second thread should run them while this one submits.
  bool shared_blocks() const { return estimate_ >= kSharedBlockNs; }

  // Called when a block goes to a scheduler on the estimate's word (or a take-back is
  // refused). Only blocks run here are sampled, so such an estimate is never corrected:
  // one preempted first sample (2.4 ms) kept a chain of 100 ns blocks on a scheduler.
  // True once the estimate is stale (kStaleRefusals calls with no sample between) and
  // until relearnt: the caller runs the block here; the next kRelearnSamples blocks run
  // here are all sampled, the estimate their median alone (the first one back pays for
  // the chain's cache lines), or the first alone when it is long.
  bool stale_after_refusal() {
    if (held_) return false;
    if (relearn_ == 0) {
      if (refusals_ < kStaleRefusals) {
        ++refusals_;
        return false;
      }
      relearn_ = kRelearnSamples;
      samples_ = 0;  // the next sample stands alone, the two after it join it
    }
    sample_mask_ = 0;  // run() samples every block meanwhile
    return true;
  }
  static constexpr uint32_t kStaleRefusals = 256;
  static constexpr uint32_t kRelearnSamples = 3;

  // A sample of `ns` (tests; run() records its samples through it).
  void record(int64_t ns) {
    if (held_) return;
    if (samples_ == 0) last_[0] = last_[1] = last_[2] = ns;  // the first one stands alone
    last_[samples_++ % 3] = ns;
    estimate_ =
        std::max(std::min(last_[0], last_[1]), std::min(std::max(last_[0], last_[1]), last_[2]));
    if (relearn_ != 0) {
      relearn_ = ns >= kLongBlockNs ? 0 : relearn_ - 1;  // a long kernel runs here once
      if (relearn_ != 0) return;                         // the mask stays 0
    }
    refusals_ = 0;
    // One longer sample samples often again: the estimate follows within two more.
    const bool tiny = ns < kTakeBackBlockNs && estimate_ < kTakeBackBlockNs;
    sample_mask_ = (tiny ? kSampleEveryShort : kSampleEvery) - 1;
  }
  uint32_t sample_every() const { return sample_mask_ + 1; }
  // Tests: the estimate stays `ns` whatever the samples say, so which path a block takes
  // does not depend on how loaded the machine is (a preempted sample reads as long).
  void hold(int64_t ns) {
    estimate_ = ns;
    held_ = true;
  }

 private:
  static constexpr uint32_t kSampleEvery = 8;  // powers of two
  static constexpr uint32_t kSampleEveryShort = 32;
  uint32_t sample_mask_ = kSampleEvery - 1;
  uint32_t count_ = 0;
  uint32_t samples_ = 0;
  uint32_t refusals_ = 0;  // stale_after_refusal() calls since the last sample
  uint32_t relearn_ = 0;   // samples still to take for a stale estimate
  int64_t last_[3] = {0, 0, 0};
  int64_t estimate_ = 0;
  bool held_ = false;
};

}  // namespace simpler::rt
