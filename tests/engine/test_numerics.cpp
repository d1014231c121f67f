// Programs through the Engine with correct numerics against host references, in both
// modes (TMR: orchestration concurrent with execution; HBG: graph built first), with
// default and deliberately small rings (back-pressure).
#include <cmath>
#include <cstring>

#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

uint64_t f32(float v) { return scalar_bits_from_f32(v); }

struct Mode {
  bool build_graph_first;
  const char* name;
};

class NumericsTest : public EngineTest, public ::testing::WithParamInterface<Mode> {
 protected:
  std::unique_ptr<Engine> engine(const SimplerCallConfig& config = default_config()) {
    return make_engine(config, GetParam().build_graph_first);
  }
};

INSTANTIATE_TEST_SUITE_P(Modes, NumericsTest,
                         ::testing::Values(Mode{false, "tensormap_and_ringbuffer"},
                                           Mode{true, "host_build_graph"}),
                         [](const auto& info) {
                           return std::string(info.param.build_graph_first ? "HBG" : "TMR");
                         });

TEST_P(NumericsTest, VectorAdd16384) {
  constexpr size_t n = 16384;
  DeviceBuffer a(n * 4), b(n * 4), c(n * 4);
  const auto ha = iota_floats(n, 1.0f, 0.5f);
  const auto hb = iota_floats(n, -3.0f, 0.25f);
  a.upload(ha);
  b.upload(hb);
  auto program = load(test_programs::vector_add());
  auto e = engine();
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({a.tensor({n}), b.tensor({n}), c.tensor({n})}), &error),
            SIMPLER_OK)
      << error;
  const auto hc = c.download<float>();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hc[i], ha[i] + hb[i]) << "element " << i;
}

void check_dag(Engine& e, const LoadedProgram& program, size_t n) {
  DeviceBuffer a(n * 4), b(n * 4), f(n * 4);
  const auto ha = iota_floats(n, 0.5f, 0.125f);
  const auto hb = iota_floats(n, 2.0f, -0.25f);
  a.upload(ha);
  b.upload(hb);
  std::string error;
  ASSERT_EQ(run(e, program,
                make_args({a.tensor({int64_t(n)}), b.tensor({int64_t(n)}), f.tensor({int64_t(n)})}),
                &error),
            SIMPLER_OK)
      << error;
  const auto hf = f.download<float>();
  for (size_t i = 0; i < n; ++i) {
    const float s = ha[i] + hb[i];
    ASSERT_EQ(hf[i], (s + 1.0f) * (s + 2.0f) + s) << "element " << i;
  }
}

TEST_P(NumericsTest, DagWithRuntimeAllocatedIntermediates) {
  auto program = load(test_programs::dag());
  auto e = engine();
  check_dag(*e, *program, 4096);
}

std::vector<float> nested_reference(std::vector<float> x, int outer, int inner) {
  for (int i = 0; i < outer; ++i) {
    for (float& v : x) {  // the kernels' exact float operations
      float t = v + 1.0f;
      for (int j = 0; j < inner; ++j) t += 1.0f;
      v = v + t;
    }
  }
  return x;
}

void check_nested(Engine& e, const LoadedProgram& program, size_t n, int outer, int inner) {
  DeviceBuffer x(n * 4);
  std::vector<float> hx(n);
  for (size_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i % 7) - 3.0f;
  x.upload(hx);
  std::string error;
  ASSERT_EQ(run(e, program, make_args({x.tensor({int64_t(n)})}, {uint64_t(outer), uint64_t(inner)}),
                &error),
            SIMPLER_OK)
      << error;
  EXPECT_EQ(x.download<float>(), nested_reference(hx, outer, inner));
}

TEST_P(NumericsTest, NestedScopesAndScalars) {
  auto program = load(test_programs::nested_scopes());
  auto e = engine();
  check_nested(*e, *program, 1000, 5, 3);
}

void fill_lcg(std::vector<float>& v, uint32_t seed) {
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
}

TEST_P(NumericsTest, TiledMatmul256) {
  constexpr int64_t m = 256, k = 256, n = 256;
  std::vector<float> ha(m * k), hb(k * n);
  fill_lcg(ha, 1);
  fill_lcg(hb, 2);
  DeviceBuffer a(ha.size() * 4), b(hb.size() * 4), c(m * n * 4);
  a.upload(ha);
  b.upload(hb);
  auto program = load(test_programs::matmul());
  auto e = engine();
  std::string error;
  ASSERT_EQ(
      run(*e, *program, make_args({a.tensor({m, k}), b.tensor({k, n}), c.tensor({m, n})}), &error),
      SIMPLER_OK)
      << error;
  const auto hc = c.download<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0.0;
      for (int64_t p = 0; p < k; ++p) ref += double(ha[i * k + p]) * double(hb[p * n + j]);
      ASSERT_NEAR(hc[i * n + j], ref, 1e-3 * (1.0 + std::fabs(ref)))
          << "C[" << i << "][" << j << "]";
    }
  }
}

TEST_P(NumericsTest, SpmdBlocksCoverTheirSlices) {
  auto program = load(test_programs::spmd());
  auto e = engine();
  for (const auto& [blocks, core] :
       std::vector<std::pair<uint32_t, uint32_t>>{{1, SIMPLER_CORE_AIV},
                                                  {5, SIMPLER_CORE_AIV},
                                                  {48, SIMPLER_CORE_AIV},
                                                  {20, SIMPLER_CORE_AIC}}) {
    expect_spmd_blocks(*e, *program, blocks, core);
    if (HasFatalFailure()) return;
  }
}

TEST_P(NumericsTest, AddScalarProgram) {
  constexpr int64_t n = 300;
  DeviceBuffer x(n * 4), y(n * 4);
  const auto hx = iota_floats(n, -1.0f, 0.5f);
  x.upload(hx);
  auto program = load(test_programs::add_scalar());
  auto e = engine();
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}, {f32(2.5f)}), &error),
            SIMPLER_OK)
      << error;
  const auto hy = y.download<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hy[i], hx[i] + 2.5f);
}

TEST_P(NumericsTest, BenchPatternsComplete) {
  auto program = load(test_programs::bench());
  auto e = engine();
  DeviceBuffer scratch(4096 * 4);
  for (const auto& [pattern, param] :
       std::vector<std::pair<uint64_t, uint64_t>>{{0, 0}, {1, 0}, {2, 8}, {3, 3}, {4, 0}, {4, 3}}) {
    std::string error;
    const uint64_t tasks = GetParam().build_graph_first ? 500 : 3000;  // HBG: within the window
    ASSERT_EQ(
        run(*e, *program, make_args({scratch.tensor({4096})}, {pattern, tasks, param}), &error),
        SIMPLER_OK)
        << "pattern " << pattern << ": " << error;
  }
}

using TmrOnlyTest = EngineTest;

// A host-built graph must fit at once, so back-pressure is a TMR matter.
TEST_F(TmrOnlyTest, SmallRingsApplyBackPressureAndStayCorrect) {
  SimplerCallConfig config = default_config();
  config.task_window_size = 8;     // a scope holds 2 + inner tasks
  config.heap_ring_bytes = 16384;  // four 4 KiB intermediates
  config.dep_pool_size = 16;
  config.tensormap_capacity = 64;
  auto e = make_engine(config);
  auto nested = load(test_programs::nested_scopes());
  check_nested(*e, *nested, 1024, 40, 4);
  auto dag = load(test_programs::dag());
  check_dag(*e, *dag, 1024);
}

TEST_F(TmrOnlyTest, TinyWindowUnderConstantBackPressure) {
  // Every submit waits for the window: exercises reclaim racing with completions.
  SimplerCallConfig config = default_config();
  config.task_window_size = 4;
  config.dep_pool_size = 16;
  auto e = make_engine(config);
  auto program = load(test_programs::bench());
  DeviceBuffer scratch(4096 * 4);
  for (const auto& [pattern, param] :
       std::vector<std::pair<uint64_t, uint64_t>>{{0, 0}, {1, 0}, {2, 8}, {3, 3}, {4, 3}}) {
    std::string error;
    ASSERT_EQ(
        run(*e, *program, make_args({scratch.tensor({4096})}, {pattern, 2000, param}), &error),
        SIMPLER_OK)
        << "pattern " << pattern << ": " << error;
  }
}

TEST_F(TmrOnlyTest, ReadAndWriteValueAreOrderedWithTasks) {
  auto program = load(test_programs::values());
  auto e = make_engine();
  constexpr int64_t n = 64;
  DeviceBuffer x(n * 4), y(n * 4);
  const auto hx = iota_floats(n, 10.0f, 1.0f);
  x.upload(hx);
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({n}), y.tensor({n})}), &error), SIMPLER_OK)
      << error;
  const auto hy = y.download<float>();
  EXPECT_EQ(x.download<float>()[0], 5.0f);
  EXPECT_EQ(hy[0], 6.0f);
  EXPECT_EQ(hy[1], 12.0f);
  for (int64_t i = 2; i < n; ++i) EXPECT_EQ(hy[i], hx[i] + 1.0f);
}

TEST_F(TmrOnlyTest, ExplicitDependencyOrdersOtherwiseIndependentTasks) {
  auto program = load(test_programs::explicit_dep());
  auto e = make_engine();
  DeviceBuffer x(64), y(64);
  x.upload(std::vector<float>(16, 3.0f));
  std::string error;
  // Without the edge, B (on another scheduler) would read x[0] while A still sleeps.
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({16}), y.tensor({16})}, {50}), &error),
            SIMPLER_OK)
      << error;
  EXPECT_EQ(y.download<float>()[0], 4.0f);
  EXPECT_EQ(y.download<float>()[1], 3.0f);
}

TEST_F(TmrOnlyTest, ReadValueIsRefusedMidGraphInBuildGraphFirstMode) {
  auto program = load(test_programs::values());
  auto e = make_engine(default_config(), /*build_graph_first=*/true);
  DeviceBuffer x(256), y(256);
  std::string error;
  EXPECT_EQ(run(*e, *program, make_args({x.tensor({64}), y.tensor({64})}), &error),
            SIMPLER_CHIP_ERR_INVALID_ARGS);
  EXPECT_NE(error.find("build_graph_first"), std::string::npos) << error;
}

}  // namespace
}  // namespace simpler::rt::testing
