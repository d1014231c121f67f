// Long kernels are not serialized on the orchestrating thread. The orchestrator runs ready
// blocks itself (work-first) instead of waking a parked scheduler; with kernels that take
// tens of microseconds or more, that left every ready task waiting behind the one it ran
// (a decoder layer ran at the serial floor on 2 hardware threads). Independent long
// tasks must run at once: the probe kernel counts how many of its blocks overlap.
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

INSTANTIATE_TEST_SUITE_P(Modes, LongKernelTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "HBG" : "TMR"; });

}  // namespace
}  // namespace simpler::rt::testing
