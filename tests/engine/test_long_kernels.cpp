// Long kernels are not serialized on the orchestrating thread. The orchestrator runs ready
// blocks itself (work-first) instead of waking a parked scheduler; with kernels that take
// tens of microseconds or more, that left every ready task waiting behind the one it ran
// (a decoder layer ran at the serial floor on 2 hardware threads). Independent long
// tasks must run at once: the probe kernel counts how many of its blocks overlap.
#include "engine/inline_sense.h"
#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

class LongKernelTest : public EngineTest, public ::testing::WithParamInterface<bool> {};

TEST_P(LongKernelTest, IndependentLongTasksRunAtOnce) {
  auto engine = make_engine(default_config(), GetParam());
  auto program = load(test_programs::fan_out());
  DeviceBuffer counts(2 * sizeof(int32_t));
  counts.upload(std::vector<int32_t>{0, 0});
  std::string error;
  // 8 tasks of 20 ms: one after another they take 160 ms, time enough for a parked
  // scheduler to wake up even on a loaded machine.
  ASSERT_EQ(
      run(*engine, *program, make_args({counts.tensor({2}, DataType::INT32)}, {8, 20}), &error), 0)
      << error;
  const auto c = counts.download<int32_t>();
  EXPECT_EQ(c[0], 0);  // every block left
  EXPECT_GE(c[1], 2) << "the 8 independent 20 ms tasks never overlapped: one thread ran them";
}

// Kernels of a few microseconds, each ready the moment it is submitted: work-first alone
// runs every one on the orchestrating thread (the decode loop kept 1 of 2 threads busy).
// From kSharedBlockNs on, the orchestrator keeps a scheduler awake for the stream, so a
// queued task is taken by the scheduler while the orchestrator submits or runs another.
// (TMR: a host-built graph, HBG, wakes every scheduler when it is complete.)
TEST_F(EngineTest, AStreamOfFewMicrosecondTasksIsSharedWithAScheduler) {
  auto engine = make_engine(default_config(), /*host_build_graph=*/false);
  auto program = load(test_programs::fan_out());
  DeviceBuffer counts(2 * sizeof(int32_t));
  counts.upload(std::vector<int32_t>{0, 0});
  std::string error;
  // 20,000 tasks of 5 µs: 100 ms on one thread, time enough for a woken scheduler to
  // start even on a loaded machine.
  ASSERT_EQ(
      run(*engine, *program,
          make_args({counts.tensor({2}, DataType::INT32)}, {20000, static_cast<uint64_t>(-5)}),
          &error),
      0)
      << error;
  const auto c = counts.download<int32_t>();
  EXPECT_EQ(c[0], 0);
  EXPECT_GE(c[1], 2) << "no two 5 us tasks ever overlapped: the orchestrator ran them all";
}

// A chain of empty kernels right after an SPMD task whose blocks woke a scheduler: the
// chain must not stay split between the threads (every later task linking an edge to a
// producer still running over there: 2-3x the per-task cost, docs/performance.md
// section 1). A task the scheduler takes is taken back at the next submit.
TEST_F(EngineTest, AChainOfShortTasksComesBackToTheOrchestratingThread) {
#if defined(__SANITIZE_THREAD__)
  // Instrumented, an empty block takes longer than kTakeBackBlockNs: the scheduler then
  // runs part of the chain by design, which is not what this test is about.
  GTEST_SKIP() << "blocks are not short under TSan";
#endif
  auto engine = make_engine(default_config(), /*host_build_graph=*/false);
  auto program = load(test_programs::chain_tally());
  DeviceBuffer y(48 * sizeof(int32_t)), c(2 * sizeof(int32_t));
  constexpr uint64_t kTasks = 20000;
  std::string error;
  for (int round = 0; round < 3; ++round) {
    c.upload(std::vector<int32_t>{0, 0});
    ASSERT_EQ(
        run(*engine, *program,
            make_args({y.tensor({48}, DataType::INT32), c.tensor({2}, DataType::INT32)}, {kTasks}),
            &error),
        0)
        << error;
    const auto counts = c.download<int32_t>();
    EXPECT_EQ(counts[0], static_cast<int32_t>(kTasks));
    // Room for one preempted sample that reads as a long block (a few hundred tasks go to
    // the scheduler then); a chain left split runs thousands there.
    EXPECT_LE(counts[1], static_cast<int32_t>(kTasks / 10))
        << "round " << round << ": " << counts[1] << " chain tasks ran on a scheduler";
  }
}

// The block-time estimate is the median of the last three samples: one preempted sample
// among short blocks, or one short block among long ones, does not flip the policy.
TEST(InlineSenseTest, OneOddSampleDoesNotFlipTheEstimate) {
  InlineSense sense;
  EXPECT_FALSE(sense.shared_blocks());  // no sample yet: work-first
  sense.record(500);
  EXPECT_EQ(sense.block_ns(), 500);
  sense.record(5'000'000);  // preempted
  EXPECT_FALSE(sense.shared_blocks());
  EXPECT_FALSE(sense.long_blocks());
  sense.record(400);
  EXPECT_FALSE(sense.shared_blocks());

  InlineSense tiles;
  tiles.record(145'000);
  tiles.record(145'000);
  tiles.record(8'000);  // a residual add among matmul tiles
  EXPECT_TRUE(tiles.long_blocks());
  tiles.record(6'000);  // two in a row: the kernels did get shorter
  EXPECT_FALSE(tiles.long_blocks());
  EXPECT_TRUE(tiles.shared_blocks());
}

// A long estimate sends blocks to a scheduler, where this thread samples none: after
// kStaleRefusals such blocks with no sample between it is stale, and the next
// kRelearnSamples blocks run here are all sampled, their median the estimate (one
// preempted first sample kept a 20,000-task chain of 100 ns blocks on a scheduler).
TEST(InlineSenseTest, AStaleLongEstimateIsLearntAgainFromTheNextThreeBlocks) {
  InlineSense sense;
  for (int i = 0; i < 3; ++i) sense.record(2'400'000);
  for (uint32_t i = 0; i < InlineSense::kStaleRefusals; ++i)
    EXPECT_FALSE(sense.stale_after_refusal());
  EXPECT_TRUE(sense.stale_after_refusal());
  sense.record(5'000);  // the first block back: cold caches
  EXPECT_TRUE(sense.stale_after_refusal()) << "one sample does not end the relearning";
  sense.record(100);
  sense.record(120);
  EXPECT_EQ(sense.block_ns(), 120) << "the median of the three, without the old samples";
  EXPECT_FALSE(sense.stale_after_refusal());

  InlineSense tiles;  // really long blocks: one sample tells, no second one runs here
  for (int i = 0; i < 3; ++i) tiles.record(2'400'000);
  for (uint32_t i = 0; i <= InlineSense::kStaleRefusals; ++i) (void)tiles.stale_after_refusal();
  tiles.record(95'000);
  EXPECT_EQ(tiles.block_ns(), 95'000);
  EXPECT_FALSE(tiles.stale_after_refusal());

  InlineSense sampled;  // samples in between: the estimate is not stale
  for (int i = 0; i < 3; ++i) sampled.record(2'400'000);
  for (int round = 0; round < 3; ++round) {
    for (uint32_t i = 1; i < InlineSense::kStaleRefusals; ++i) (void)sampled.stale_after_refusal();
    sampled.record(2'400'000);
  }
  EXPECT_FALSE(sampled.stale_after_refusal());

  InlineSense held;  // tests that hold the estimate keep it
  held.hold(2'400'000);
  for (uint32_t i = 0; i <= 2 * InlineSense::kStaleRefusals; ++i)
    EXPECT_FALSE(held.stale_after_refusal());
}

// Blocks shorter than kTakeBackBlockNs are sampled less often (the clock reads were 10 %
// of an empty task); one longer sample goes back to the usual rate at once.
// Sampling: one clock read per 8..32 blocks while they are short (the span since the
// previous read bounds them), blocks timed as soon as they are not.
// run() calls its block exactly once and returns what it returned, on sampled calls (the
// clock read before it, out of line) as on the others; a block that did not run is not
// counted as one (the next span's average would be too low).
TEST(InlineSenseTest, EveryCallRunsItsBlockOnceAndReturnsItsAnswer) {
  InlineSense sense;
  int calls = 0;
  for (int i = 0; i < 300; ++i) {
    const bool ran = i % 3 != 0;
    EXPECT_EQ(sense.run([&] {
      ++calls;
      return ran;
    }),
              ran)
        << "call " << i;
    EXPECT_EQ(calls, i + 1) << "call " << i;
  }
  EXPECT_GT(sense.clock_reads(), 0u) << "no call was sampled";
}

TEST(InlineSenseTest, AStreakOfShortBlocksReadsTheClockOncePerSample) {
  InlineSense sense;
  constexpr int kBlocks = 1024;
  for (int i = 0; i < kBlocks; ++i) sense.run([] { return true; });
  // Two reads per 8 blocks would be 256. A preempted span falls back to timing its block
  // and sampling every 8 for a while, so allow some of those.
  EXPECT_LT(sense.clock_reads(), 100u);
  EXPECT_FALSE(sense.shared_blocks());
}

bool busy_3us() {  // at least 3 us, longer when preempted
  const int64_t until = support::steady_now_ns() + 3'000;
  while (support::steady_now_ns() < until) {
  }
  return true;
}

TEST(InlineSenseTest, LongBlocksAfterAStreakAreTimedAtOnce) {
  InlineSense sense;
  for (int i = 0; i < 64; ++i) sense.run([] { return true; });
  // The first sample after the change (at most 32 blocks on) sees a long span and times
  // its block, the next one (8 on) too: the median of three says "shared" by then.
  for (int i = 0; i < 48; ++i) sense.run(busy_3us);
  EXPECT_TRUE(sense.shared_blocks()) << sense.block_ns() << " ns";
}

// One block over the span's bound among short ones: the span that holds it is not taken as
// a sample (one read, its average), its next sample times a block instead (two reads). Where
// the sample points fall depends on the clock (a slow build samples differently), so the
// long block is placed until it lies inside a span rather than being a timed sample itself.
TEST(InlineSenseTest, ASpanHoldingALongBlockIsNotASample) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    InlineSense sense;
    for (int i = 0; i < 64 + attempt; ++i) sense.run([] { return true; });
    const uint64_t at_long = sense.clock_reads();
    sense.run(busy_3us);
    if (sense.clock_reads() - at_long == 2) continue;  // the long block was timed itself
    const uint64_t before = sense.clock_reads();
    for (int i = 0; i < 64 && sense.clock_reads() == before; ++i) sense.run([] { return true; });
    EXPECT_EQ(sense.clock_reads() - before, 2u);  // timed; 1 = the span was a sample
    EXPECT_FALSE(sense.shared_blocks());          // one long block does not flip the policy
    return;
  }
  ADD_FAILURE() << "the long block was a timed sample in every attempt";
}

// A span of few blocks that ran (the thread mostly submitted, or found no idle core) is
// not a sample: its average would count this thread's other work as block time and read
// short blocks as >= kTakeBackBlockNs (no take-back of a split chain). Their blocks are
// timed instead.
TEST(InlineSenseTest, ASpanOfFewBlocksThatRanIsNotASample) {
  InlineSense sense;
  int call = 0;
  for (int i = 0; i < 256; ++i) {
    const int64_t until = support::steady_now_ns() + 100;  // other work between blocks
    while (support::steady_now_ns() < until) {
    }
    sense.run([&] { return call++ % 4 == 0; });  // one block in 4 calls runs
  }
  EXPECT_LT(sense.block_ns(), kTakeBackBlockNs);
}

// Tests that must not depend on the machine's load hold the estimate.
TEST(InlineSenseTest, AHeldEstimateIgnoresSamples) {
  InlineSense sense;
  sense.hold(0);
  for (int i = 0; i < 3; ++i) sense.record(5'000'000);
  EXPECT_EQ(sense.block_ns(), 0);
  EXPECT_FALSE(sense.long_blocks());
}

INSTANTIATE_TEST_SUITE_P(Modes, LongKernelTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "HBG" : "TMR"; });

}  // namespace
}  // namespace simpler::rt::testing
