// Waiting cluster parts and idle crew helpers spin only briefly, then park: a part that
// waits 50 ms for a flag, or a helper between tasks, must not hold a hardware thread
// (cluster_sync.h kClusterSpinBudget, cluster_crew.h kCrewSpinBudget). Measured as the
// process's CPU time: about 1 ms here, 36-66 ms with a spin budget of 100 ms (at load 9.5).
#include <time.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

class ClusterWaitTest : public EngineTest, public ::testing::WithParamInterface<bool> {};

INSTANTIATE_TEST_SUITE_P(Modes, ClusterWaitTest, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "HBG" : "TMR"); });

TEST_P(ClusterWaitTest, WaitingPartsAndIdleHelpersParkAfterABoundedSpin) {
  auto program = load(test_programs::cluster());
  auto e = make_engine(default_config(), GetParam());
  SimTopology topology{};
  ASSERT_EQ(sim_device_topology(kDevice, &topology), SIMPLER_OK);
  const uint32_t blocks = static_cast<uint32_t>(topology.clusters);
  const int64_t n = 64 * blocks;
  DeviceBuffer x(n * 4), y(n * 4);
  x.upload(iota_floats(n, 0.0f, 1.0f));
  std::string error;
  // Every helper thread exists after this run (thread creation is not what is measured).
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {blocks, 0}), &error),
            SIMPLER_OK)
      << error;

  // Mode 4: each AIC part sleeps 50 ms while both AIV parts of its cluster wait for it.
  const double before = process_cpu_ms();
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {blocks, 4}), &error),
            SIMPLER_OK)
      << error;
  const double waiting = process_cpu_ms() - before;
  EXPECT_LT(waiting, 15.0) << 2 * blocks << " parts waited 50 ms: they spun instead of parking";

  const double idle_before = process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double idle = process_cpu_ms() - idle_before;
  EXPECT_LT(idle, 5.0) << "idle helpers or schedulers kept spinning between runs";

  const auto hx = x.download<float>();
  const auto hy = y.download<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hy[i], 2.0f * hx[i] + 1.0f) << "element " << i;
}

}  // namespace
}  // namespace simpler::rt::testing
