// Take-back (Orchestrator::submit): a chain of short tasks that a scheduler took comes
// back to the orchestrating thread. The block-time estimate decides it, and only blocks
// this thread runs are sampled, so a long estimate must not keep a chain away for good:
// one preempted first sample (2.4 ms) kept a 20,000-task chain of 100 ns blocks on a
// scheduler (docs/performance.md section 1, "Take-back and a stale estimate"). Every
// refused take-back counts towards InlineSense::take_back's stale rule.
#include <gtest/gtest.h>

#include <cstdint>

#include "engine/orchestrator.h"
#include "engine/run_track.h"
#include "test_orchestrator_sizes.h"

namespace simpler::rt {
namespace {

void empty_kernel(int64_t*) {}

}  // namespace

// A chain whose producers are queued behind a scheduler counted as working (no thread
// runs them while the orchestration submits), and an estimate of 2.4 ms.
class OrchestratorTakeBack : public testing::DirectOrchestratorTest {
 protected:
  static constexpr uint32_t kChain = InlineSense::kStaleRefusals + 8;

  void SetUp() override {
    set_up(1024);
    add_inout_kernel(1, empty_kernel);
    program_.func_name = "take_back_test";
    program_.orchestration = orchestration;
    g_x = x_->tensor({16});
    g_fixture = this;
    for (int i = 0; i < 3; ++i) orch_->inline_sense_.record(2'400'000);
    chip_.awake = 1;  // a scheduler that runs blocks (never idle)
  }
  static int orchestration(const ChipStorageTaskArgs* /*args*/, const SimplerOrchApi* api) {
    const SimplerTaskDesc d = testing::inout_task(1, g_x);
    for (uint32_t i = 0; i < kChain; ++i) {
      SimplerTaskResult r{};
      if (const int rc = api->submit(api->rt, &d, &r)) return rc;
    }
    // The submits refused take-back over and over with no sample between: stale now.
    g_fixture->stale_ = g_fixture->orch_->inline_sense_.take_back();
    g_fixture->chip_.awake = 0;  // the end of the run runs the chain here
    return 0;
  }
  static inline ChipTensor g_x{};
  static inline OrchestratorTakeBack* g_fixture = nullptr;
  bool stale_ = false;
};

TEST_F(OrchestratorTakeBack, RefusedTakeBacksMakeALongEstimateStale) {
  RunTrack* track = orch_->begin_run(program_, RunOptions{});
  ChipStorageTaskArgs args{};
  orch_->run(args);
  ASSERT_EQ(track->status.code(), SIMPLER_OK) << track->status.message();
  EXPECT_TRUE(stale_) << "the orchestrator's refused take-backs were not counted";
}

}  // namespace simpler::rt
