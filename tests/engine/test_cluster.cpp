// Cluster (MIX) tasks through the Engine, in both modes (TMR and HBG): whole clusters
// started together, the cluster buffer and flags/barrier between the parts, refusal of a
// task that asks more clusters than the chip has, and waits that can never end turned into
// a typed error instead of a hang.
#include <string>
#include <vector>

#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

struct Mode {
  bool build_graph_first;
};

class ClusterTest : public EngineTest, public ::testing::WithParamInterface<Mode> {
 protected:
  std::unique_ptr<Engine> engine() {
    return make_engine(default_config(), GetParam().build_graph_first);
  }
  static uint32_t clusters() {
    SimTopology topology{};
    EXPECT_EQ(sim_device_topology(kDevice, &topology), SIMPLER_OK);
    return static_cast<uint32_t>(topology.clusters);
  }
};

INSTANTIATE_TEST_SUITE_P(Modes, ClusterTest, ::testing::Values(Mode{false}, Mode{true}),
                         [](const auto& info) {
                           return std::string(info.param.build_graph_first ? "HBG" : "TMR");
                         });

TEST_P(ClusterTest, PartsHandTilesThroughTheClusterBufferAndFlags) {
  auto program = load(test_programs::cluster());
  auto e = engine();
  for (uint32_t blocks : {1u, 3u, clusters()}) {
    const int64_t n = 64 * blocks;
    DeviceBuffer x(n * 4), y(n * 4);
    const auto hx = iota_floats(n, -3.0f, 0.25f);
    x.upload(hx);
    y.upload(std::vector<float>(n, -7.0f));
    std::string error;
    ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {blocks, 0}), &error),
              SIMPLER_OK)
        << error;
    const auto hy = y.download<float>();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(hy[i], 2.0f * hx[i] + 1.0f) << "blocks " << blocks << " element " << i;
  }
}

TEST_P(ClusterTest, EveryPartSeesItsCoreTypeCoreAndCluster) {
  auto program = load(test_programs::cluster());
  auto e = engine();
  const uint32_t blocks = clusters();
  const int64_t n = 3 * blocks;
  DeviceBuffer x(n * 4), y(n * 4);
  y.upload(std::vector<float>(n, -1.0f));
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {blocks, 3}), &error),
            SIMPLER_OK)
      << error;
  const auto hy = y.download<float>();
  for (uint32_t b = 0; b < blocks; ++b) {
    EXPECT_EQ(hy[3 * b], 1.0f) << "AIC part of block " << b;
    EXPECT_EQ(hy[3 * b + 1], 101.0f) << "AIV part 0 of block " << b;
    EXPECT_EQ(hy[3 * b + 2], 111.0f) << "AIV part 1 of block " << b;
  }
}

TEST_P(ClusterTest, MoreClustersThanTheChipHasIsRefusedAtSubmit) {
  auto program = load(test_programs::cluster());
  auto e = engine();
  const uint32_t blocks = clusters() + 1;
  const int64_t n = 64 * blocks;
  DeviceBuffer x(n * 4), y(n * 4);
  y.upload(std::vector<float>(n, -7.0f));
  std::string error;
  EXPECT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {blocks, 0}), &error),
            SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE);
  EXPECT_NE(error.find("asks for " + std::to_string(blocks) + " clusters"), std::string::npos)
      << error;
  EXPECT_NE(error.find("block_num <= " + std::to_string(clusters())), std::string::npos) << error;
  for (float v : y.download<float>()) ASSERT_EQ(v, -7.0f) << "nothing of the task may run";
  // The engine is fine afterwards.
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {1, 0}), &error),
            SIMPLER_OK)
      << error;
}

TEST_P(ClusterTest, AFlagNobodySetsEndsTheRunWithANamedError) {
  auto program = load(test_programs::cluster());
  auto e = engine();
  DeviceBuffer x(64 * 4), y(64 * 4);
  std::string error;
  EXPECT_EQ(run(*e, *program, make_args({x.tensor({64}), y.tensor({64})}, {2, 1}), &error),
            SIMPLER_CHIP_ERR_KERNEL_FAULT);
  EXPECT_NE(error.find("cluster task deadlock"), std::string::npos) << error;
  EXPECT_NE(error.find("AIV part 1 waits for flag 5"), std::string::npos) << error;
  EXPECT_NE(error.find("the AIC part returned"), std::string::npos) << error;
  // Not a poisoning error: the next run works.
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({64}), y.tensor({64})}, {1, 0}), &error),
            SIMPLER_OK)
      << error;
}

TEST_P(ClusterTest, ABarrierAPartNeverReachesEndsTheRunWithANamedError) {
  auto program = load(test_programs::cluster());
  auto e = engine();
  DeviceBuffer x(64 * 4), y(64 * 4);
  std::string error;
  EXPECT_EQ(run(*e, *program, make_args({x.tensor({64}), y.tensor({64})}, {1, 2}), &error),
            SIMPLER_CHIP_ERR_KERNEL_FAULT);
  EXPECT_NE(error.find("waits at the barrier"), std::string::npos) << error;
}

TEST_P(ClusterTest, AWriteJustPastTheClusterBufferIsATypedFaultNotCorruption) {
  // Every cluster's buffer ends at a guard region: the overrun faults on the core thread
  // (a crash: the engine is failed sticky, as docs/faults.md says), for the first and the
  // last cluster alike.
  auto program = load(test_programs::cluster());
  DeviceBuffer x(64 * 4), y(64 * 4);
  for (uint32_t blocks : {1u, clusters()}) {
    auto e = engine();
    std::string error;
    EXPECT_EQ(run(*e, *program, make_args({x.tensor({64}), y.tensor({64})}, {blocks, 5}), &error),
              SIMPLER_CHIP_ERR_KERNEL_FAULT)
        << blocks << " clusters";
    EXPECT_NE(error.find("crashed with SIGSEGV"), std::string::npos) << error;
    EXPECT_NE(error.find("on AIC core"), std::string::npos) << error;
    std::string sticky;
    EXPECT_EQ(e->sticky_error(&sticky), SIMPLER_CHIP_ERR_KERNEL_FAULT) << sticky;
  }
}

TEST_P(ClusterTest, AFlagOutOfRangeEndsTheRunWithANamedErrorAndTheEngineKeepsWorking) {
  auto program = load(test_programs::cluster());
  auto e = engine();
  DeviceBuffer x(64 * 4), y(64 * 4);
  std::string error;
  EXPECT_EQ(run(*e, *program, make_args({x.tensor({64}), y.tensor({64})}, {1, 6}), &error),
            SIMPLER_CHIP_ERR_KERNEL_FAULT);
  EXPECT_NE(error.find("set flag 16, out of range (flags 0..15)"), std::string::npos) << error;
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({64}), y.tensor({64})}, {1, 0}), &error),
            SIMPLER_OK)
      << error;
}

TEST_P(ClusterTest, ClusterTasksAmongAStreamOfSingleCoreTasks) {
  auto program = load(test_programs::cluster_stream());
  auto e = engine();
  for (uint32_t blocks : {1u, clusters()}) {
    constexpr int64_t singles = 40;
    const int64_t n = 64 * blocks;
    DeviceBuffer x(n * 4), y(n * 4), s(2 * singles * 4);
    const auto hx = iota_floats(n, 1.0f, 1.0f);
    x.upload(hx);
    s.upload(std::vector<float>(2 * singles, 0.0f));
    std::string error;
    ASSERT_EQ(run(*e, *program,
                  make_args({x.tensor({n}), y.tensor({n}), s.tensor({2 * singles})},
                            {singles, 0, blocks}),
                  &error),
              SIMPLER_OK)
        << error;
    const auto hy = y.download<float>();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hy[i], 2.0f * hx[i] + 1.0f) << i;
    for (float v : s.download<float>()) ASSERT_EQ(v, 1.0f);
  }
}

}  // namespace
}  // namespace simpler::rt::testing

namespace simpler::rt::testing {
namespace {

// A cluster task's parts run on helper threads, not on a dispatcher, so the task's
// completion must wake a dispatcher for every dependent it releases: a dispatcher that
// completes a task takes one released dependent itself, a helper takes none. The cluster
// task here runs 50 ms, so every dispatcher (the waiting orchestrator included) has parked
// when it completes and releases its one dependent. Before the fix nobody woke up for it
// and the run hung (ctest's timeout ends this test then).
TEST_P(ClusterTest, ACompletedClusterTaskWakesADispatcherForItsDependent) {
  auto program = load(test_programs::cluster_then());
  auto e = engine();
  const int64_t n = 64;
  DeviceBuffer x(n * 4), y(n * 4);
  const auto hx = iota_floats(n, -3.0f, 0.25f);
  x.upload(hx);
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {4}), &error), SIMPLER_OK)
      << error;
  const auto hy = y.download<float>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hy[i], 2.0f * hx[i] + 1.0f + (i == 0 ? 1.0f : 0.0f)) << "element " << i;
}

}  // namespace
}  // namespace simpler::rt::testing

namespace simpler::rt::testing {
namespace {

// While the orchestrator is parked (waiting for the run's last task) it runs nothing, so
// its hardware thread is free for one more scheduler. Here every dispatcher has parked
// during the 50 ms cluster task, whose completion releases 4 independent 20 ms tasks: two
// of them must run at once (before, the awake budget stayed at hardware - 1 schedulers
// while the orchestrator slept, and one scheduler ran the four one after another).
TEST_P(ClusterTest, AParkedOrchestratorLeavesItsThreadToASchedulerAfterAClusterTask) {
  auto program = load(test_programs::cluster_fan());
  auto e = engine();
  const int64_t n = 64;
  DeviceBuffer x(n * 4), y(n * 4), counts(2 * sizeof(int32_t));
  x.upload(iota_floats(n, 0.0f, 1.0f));
  counts.upload(std::vector<int32_t>{0, 0});
  std::string error;
  ASSERT_EQ(
      run(*e, *program,
          make_args({x.tensor({n}), y.tensor({n}), counts.tensor({2}, DataType::INT32)}, {4, 20}),
          &error),
      SIMPLER_OK)
      << error;
  const auto c = counts.download<int32_t>();
  EXPECT_EQ(c[0], 0);
  EXPECT_GE(c[1], 2) << "the 4 tasks released by the cluster task ran one at a time";
}

}  // namespace
}  // namespace simpler::rt::testing
