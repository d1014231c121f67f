// Take-back (Orchestrator::submit): a chain of short tasks that a scheduler took comes
// back to the orchestrating thread. The block-time estimate decides it, and only blocks
// this thread runs are sampled, so a long estimate must not keep a chain away for good:
// one preempted first sample (2.4 ms) kept a 20,000-task chain of 100 ns blocks on a
// scheduler (docs/performance.md section 1, "Take-back and a stale estimate"). Each block
// sent away on the estimate's word counts towards InlineSense::stale_after_refusal.
#include <gtest/gtest.h>

#include <cstdint>

#include "engine/orchestrator.h"
#include "engine/run_track.h"
#include "test_orchestrator_sizes.h"

namespace simpler::rt {
namespace {

bool g_submitting = false;
int g_ran_while_submitting = 0;  // no scheduler thread: every block runs on this one
void counting_kernel(int64_t*) { g_ran_while_submitting += g_submitting ? 1 : 0; }

}  // namespace

// A chain whose producers are queued behind a scheduler counted as working (no thread
// runs them while the orchestration submits), and an estimate of 2.4 ms.
class OrchestratorTakeBack : public testing::DirectOrchestratorTest {
 protected:
  static constexpr uint32_t kChain = 2 * InlineSense::kStaleRefusals;

  void SetUp() override {
    set_up(1024);
    add_inout_kernel(1, counting_kernel);
    program_.func_name = "take_back_test";
    program_.orchestration = orchestration;
    g_x = x_->tensor({16});
    g_fixture = this;
    g_submitting = false;
    g_ran_while_submitting = 0;
    for (int i = 0; i < 3; ++i) orch_->inline_sense_.record(2'400'000);
    chip_.awake = 1;  // a scheduler that runs blocks (never idle)
  }
  static int orchestration(const ChipStorageTaskArgs* /*args*/, const SimplerOrchApi* api) {
    const SimplerTaskDesc d = testing::inout_task(1, g_x);
    g_submitting = true;
    for (uint32_t i = 0; i < kChain; ++i) {
      SimplerTaskResult r{};
      if (const int rc = api->submit(api->rt, &d, &r)) return rc;
    }
    g_submitting = false;
    g_fixture->estimate_ = g_fixture->orch_->inline_sense_.block_ns();
    g_fixture->chip_.awake = 0;  // the end of the run runs what is left here
    return 0;
  }
  static inline ChipTensor g_x{};
  static inline OrchestratorTakeBack* g_fixture = nullptr;
  int64_t estimate_ = 0;
};

TEST_F(OrchestratorTakeBack, AChainSentAwayOnALongEstimateIsSampledAgain) {
  RunTrack* track = orch_->begin_run(program_, RunOptions{});
  ChipStorageTaskArgs args{};
  orch_->run(args);
  ASSERT_EQ(track->status.code(), SIMPLER_OK) << track->status.message();
  EXPECT_GT(g_ran_while_submitting, 0) << "every block stayed in the queue";
  EXPECT_LT(estimate_, 2'400'000) << "the stale estimate was never sampled again";
}

}  // namespace simpler::rt
