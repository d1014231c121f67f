// simpler runtime — how long the blocks the orchestrating thread runs itself take (internal).
//
// Work-first (the orchestrator runs a ready block itself instead of waking a parked
// scheduler) wins while kernels are short: a futex wake-up costs microseconds on a small
// VM. With longer kernels it serializes the chip: while the orchestrator is inside a
// kernel, the next ready task waits for it although a parked scheduler could run it on
// the other hardware thread (the decoder prefill ran at the serial floor on 2 threads;
// the decode loop's 4 µs kernels kept one thread busy of two).
// The orchestrator therefore samples the block time every few blocks and estimates it as
// the median of the last three samples: a sample stretched by preemption, or one short
// kernel among long ones (a residual add among matmul tiles), does not flip the policy on
// its own. A clock read costs 20-100 ns on this VM, a tenth of an empty task at two reads
// per eight blocks, so a sample reads it once while blocks are short: the span since the
// previous read bounds every block in it (run()).
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
  // Runs one block through `run_block` (returns whether it ran one), sampling the block
  // time every 8..32 blocks. A sample reads the clock once, before its block: when the
  // span since the previous read is under kStreakSpanNs (everything this thread did
  // meanwhile included) and covers 8..kStreakMaxBlocks blocks that ran, no block of
  // it reached kSharedBlockNs, and their average is the sample (under kTakeBackBlockNs,
  // as the median of timed short blocks is); the next span is sized to stay well under
  // the bound. Otherwise (the first sample, longer blocks, a slow orchestration, a
  // preemption) its block is timed with a second read, and samples come every
  // kSampleEvery blocks: a longer block is seen at the first sample after it, and µs
  // kernels are sampled as often as before.
  // One call of run_block, inline in the caller (the immediate run's block is inline in
  // the submit entry through it: a second call site would keep it out of line, a frame
  // and a closure per task); the sample's clock reads out of line.
  template <class RunBlock>
  [[gnu::always_inline]] bool run(RunBlock&& run_block) {
    const bool timed = --streak_left_ == 0 && begin_sample();
    const bool ran = run_block();
    ran_ += ran ? 1 : 0;
    if (timed) [[unlikely]]
      end_sample(ran);
    return ran;
  }
  uint64_t clock_reads() const { return clock_reads_; }  // tests: what sampling costs
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
    streak_left_ = 1;  // run() samples the next block
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
      if (relearn_ != 0) return;
    }
    refusals_ = 0;
  }
  // Tests: the estimate stays `ns` whatever the samples say, so which path a block takes
  // does not depend on how loaded the machine is (a preempted sample reads as long).
  void hold(int64_t ns) {
    estimate_ = ns;
    held_ = true;
  }

 private:
  static constexpr uint32_t kSampleEvery = 8;
  // A span's bound: under kSharedBlockNs, so a block that long never hides in an accepted
  // span; over at least kSampleEvery blocks its average (< 1500 / 8) stays under
  // kTakeBackBlockNs, so this thread's other work in it never reads as block time.
  static constexpr int64_t kStreakSpanNs = 1'500;
  static constexpr uint32_t kStreakMaxBlocks = 32;

  int64_t now() {
    ++clock_reads_;
    return support::steady_now_ns();
  }

  // A sample, before its block (run()): true when the block is to be timed (end_sample);
  // false when the span since the last read was the sample (the block then counts
  // toward the next span).
  [[gnu::noinline]] bool begin_sample() {
    const int64_t start = now();
    const int64_t span = start - last_read_;
    const uint32_t blocks = ran_ - last_ran_;
    if (blocks >= kSampleEvery && blocks <= kStreakMaxBlocks && span >= 0 && span < kStreakSpanNs) {
      const int64_t average = span / blocks;
      record(average);
      last_read_ = start;
      last_ran_ = ran_;
      // Spans expected at half the bound.
      const int64_t next = kStreakSpanNs / 2 / (average > 0 ? average : 1);
      streak_left_ =
          static_cast<uint32_t>(std::clamp<int64_t>(next, kSampleEvery, kStreakMaxBlocks));
      return false;
    }
    streak_left_ = kSampleEvery + 1;  // the next span: 8 blocks after this one
    timed_start_ = start;
    return true;
  }
  // After the timed block (counted in ran_ already): the next span starts after it.
  [[gnu::noinline]] void end_sample(bool ran) {
    last_read_ = now();
    last_ran_ = ran_;
    if (ran) record(last_read_ - timed_start_);
  }

  uint32_t streak_left_ = 1;  // blocks until the next sample
  uint32_t ran_ = 0;          // blocks run (wraps; only differences count)
  uint32_t last_ran_ = 0;     // ran_ at the last clock read
  int64_t last_read_ = 0;
  int64_t timed_start_ = 0;  // the timed block's first read (begin_sample)
  uint64_t clock_reads_ = 0;
  uint32_t samples_ = 0;
  uint32_t refusals_ = 0;  // stale_after_refusal() calls since the last sample
  uint32_t relearn_ = 0;   // samples still to take for a stale estimate
  int64_t last_[3] = {0, 0, 0};
  int64_t estimate_ = 0;
  bool held_ = false;
};

}  // namespace simpler::rt
