// The hand-off between two pipelined runs (ChipState::orchestrator_leaves): when the
// orchestrating thread comes back at once for the next run (`wake` false), the awake budget
// stays at its orchestrating size. Raised for the few µs of the gap, it let completions
// wake a second scheduler, which then stayed awake beside the next orchestration while
// work kept coming: three runnable threads on two hardware threads (scene_bench's decode
// loop at depth 2: a third of the schedulers' blocks ran over the budget).
#include <gtest/gtest.h>

#include "engine/chip_state.h"

namespace simpler::rt::testing {
namespace {

void two_hardware_threads(ChipState& chip) {
  chip.awake_orchestrating = 1;  // the orchestrating thread and one scheduler
  chip.awake_unattended = 2;
  chip.max_awake = chip.awake_orchestrating;
}

TEST(PipelineHandOffTest, ARunWhoseSuccessorFollowsKeepsTheOrchestratingBudget) {
  ChipState chip;
  two_hardware_threads(chip);
  chip.orchestrator_leaves(/*wake=*/false);
  EXPECT_EQ(chip.max_awake.load(), 1)
      << "the gap before the next orchestration opened the budget to a second scheduler";
}

TEST(PipelineHandOffTest, ALastRunHandsTheOrchestratorsThreadToTheSchedulers) {
  ChipState chip;
  two_hardware_threads(chip);
  chip.orchestrator_leaves(/*wake=*/true);
  EXPECT_EQ(chip.max_awake.load(), 2);
  chip.orchestrator_returns();
  EXPECT_EQ(chip.max_awake.load(), 1);
}

}  // namespace
}  // namespace simpler::rt::testing
