// Program mode with real programs on both builds: numerics with HOST and DEVICE tensors,
// staging directions, the async run lifecycle, argument checks, callable registry rules,
// failed runs, and finalize_device waiting for launched runs.
#include <cmath>
#include <numeric>
#include <random>

#include "abi_test_support.h"
#include "program_catalog.h"

namespace simpler::test {
namespace {

namespace programs = simpler::test_programs;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class ProgramRuns : public BothBuilds {
 protected:
  void SetUp() override {
    BothBuilds::SetUp();
    ctx_ = std::make_unique<Context>(abi());
    ASSERT_STATUS(SIMPLER_OK, abi().init_device(*ctx_, 0, nullptr));
  }
  void TearDown() override {
    ctx_.reset();
    BothBuilds::TearDown();
  }
  SimplerDeviceContext* ctx() const { return ctx_->get(); }

  int64_t register_callable(const ChipCallable& callable) {
    std::vector<uint8_t> image = image_of(callable);
    int64_t id = -1;
    EXPECT_STATUS(SIMPLER_OK, abi().register_callable(ctx(), image.data(), image.size(), &id))
        << last_error(abi(), ctx());
    return id;
  }

  std::unique_ptr<Context> ctx_;
};

TEST_P(ProgramRuns, VectorAddOfHostTensors) {
  const int64_t id = register_callable(programs::vector_add());
  constexpr size_t n = 16384;
  std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2), c(n, -1.0f);
  ChipStorageTaskArgs args = host_args({a, b, c});
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), id, &args, nullptr)) << last_error(abi(), ctx());
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_P(ProgramRuns, DagWithRuntimeAllocatedIntermediates) {
  const int64_t id = register_callable(programs::dag());
  constexpr size_t n = 4096;
  std::vector<float> a = random_floats(n, 3), b = random_floats(n, 4), f(n, 0.0f);
  ChipStorageTaskArgs args = host_args({a, b, f});
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), id, &args, nullptr)) << last_error(abi(), ctx());
  for (size_t i = 0; i < n; ++i) {
    const float s = a[i] + b[i];
    ASSERT_FLOAT_EQ(f[i], (s + 1.0f) * (s + 2.0f) + s) << i;
  }
}

TEST_P(ProgramRuns, TiledMatmul256) {
  const int64_t id = register_callable(programs::matmul());
  constexpr int64_t n = 256;
  std::vector<float> A = random_floats(n * n, 5), B = random_floats(n * n, 6), C(n * n, 0.0f);
  ChipStorageTaskArgs args{};
  args_add_tensor(args, host_f32(A, {n, n}));
  args_add_tensor(args, host_f32(B, {n, n}));
  args_add_tensor(args, host_f32(C, {n, n}));
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), id, &args, nullptr)) << last_error(abi(), ctx());
  for (int64_t i = 0; i < n; i += 17) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < n; ++k) ref += double{A[i * n + k]} * double{B[k * n + j]};
      ASSERT_NEAR(C[i * n + j], ref, 1e-3 * (1.0 + std::fabs(ref))) << i << "," << j;
    }
  }
}

TEST_P(ProgramRuns, DeviceTensorsPassThroughUntouched) {
  const int64_t id = register_callable(programs::vector_add());
  constexpr size_t n = 1000;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a = random_floats(n, 7), b = random_floats(n, 8), c(n, 0.0f);
  uint64_t da = 0, db = 0, dc = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx(), bytes, &da));
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx(), bytes, &db));
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx(), bytes, &dc));
  ASSERT_STATUS(SIMPLER_OK, abi().copy_to(ctx(), da, a.data(), bytes));
  ASSERT_STATUS(SIMPLER_OK, abi().copy_to(ctx(), db, b.data(), bytes));
  ChipStorageTaskArgs args{};
  args_add_tensor(args, f32_tensor(da, {int64_t{n}}, AddressSpace::DEVICE));
  args_add_tensor(args, f32_tensor(db, {int64_t{n}}, AddressSpace::DEVICE));
  args_add_tensor(args, f32_tensor(dc, {int64_t{n}}, AddressSpace::DEVICE));
  sim_reset_counters();
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), id, &args, nullptr)) << last_error(abi(), ctx());
  EXPECT_EQ(call_count("memcpy"), 0u);  // nothing staged
  ASSERT_STATUS(SIMPLER_OK, abi().copy_from(ctx(), c.data(), dc, bytes));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_P(ProgramRuns, StagingCopiesInOnlyInputsAndBackOnlyOutputs) {
  const int64_t id = register_callable(programs::vector_add());
  constexpr size_t n = 512;
  std::vector<float> a = random_floats(n, 9), b = random_floats(n, 10);
  // c is a strided view: every other element of a buffer whose gaps hold sentinels.
  std::vector<float> c_buffer(2 * n, 1234.5f);
  const ChipTensor c = tensor_slice(host_f32(c_buffer, {int64_t{n}, 2}), 1, 0, 1);  // shape [n, 1]
  ChipStorageTaskArgs args{};
  args_add_tensor(args, host_f32(a, {int64_t{n}, 1}));
  args_add_tensor(args, host_f32(b, {int64_t{n}, 1}));
  args_add_tensor(args, c);
  const std::vector<float> a_before = a;
  sim_reset_counters();
  uint64_t run_id = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().prepare_run(ctx(), id, &args, nullptr, &run_id))
      << last_error(abi(), ctx());
  EXPECT_EQ(call_count("memcpy"), 2u);  // a and b copied in; the OUT view is not
  std::fill(a.begin(), a.end(), 0.0f);  // staged at prepare: later host writes are not seen
  ASSERT_STATUS(SIMPLER_OK, abi().launch_run(ctx(), run_id));
  sim_reset_counters();
  ASSERT_STATUS(SIMPLER_OK, abi().finalize_run(ctx(), run_id)) << last_error(abi(), ctx());
  EXPECT_EQ(call_count("memcpy"), n);  // one run per strided element of c; a and b not copied back
  EXPECT_EQ(a, std::vector<float>(n, 0.0f));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(c_buffer[2 * i], a_before[i] + b[i]) << i;
    ASSERT_EQ(c_buffer[2 * i + 1], 1234.5f) << "gap " << i << " was overwritten";
  }
}

TEST_P(ProgramRuns, AsyncLifecyclePollWaitFinalize) {
  const int64_t id = register_callable(programs::sleep());
  std::vector<float> x = {10.0f, 20.0f};
  ChipStorageTaskArgs args{};
  args_add_tensor(args, host_f32(x));
  args_add_scalar(args, 300);  // ms
  uint64_t run_id = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().prepare_run(ctx(), id, &args, nullptr, &run_id));
  int32_t done = -1;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                abi().poll_run(ctx(), run_id, &done));  // not launched
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().wait_run(ctx(), run_id, 0));
  ASSERT_STATUS(SIMPLER_OK, abi().launch_run(ctx(), run_id));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().launch_run(ctx(), run_id));  // once
  ASSERT_STATUS(SIMPLER_OK, abi().poll_run(ctx(), run_id, &done));
  EXPECT_EQ(done, 0);
  EXPECT_STATUS(PTO_RUNTIME_ERR_TIMEOUT, abi().wait_run(ctx(), run_id, 1000));
  EXPECT_STATUS(PTO_RUNTIME_ERR_TIMEOUT,
                abi().wait_run(ctx(), run_id, 0));  // repeatable, still going
  EXPECT_STATUS(SIMPLER_OK, abi().wait_run(ctx(), run_id, -1));
  EXPECT_STATUS(SIMPLER_OK, abi().wait_run(ctx(), run_id, 0));  // a finished run repeats its status
  ASSERT_STATUS(SIMPLER_OK, abi().poll_run(ctx(), run_id, &done));
  EXPECT_EQ(done, 1);
  EXPECT_EQ(x[0], 10.0f);  // copied back only by finalize_run
  ASSERT_STATUS(SIMPLER_OK, abi().finalize_run(ctx(), run_id));
  EXPECT_EQ(x[0], 11.0f);
  EXPECT_EQ(x[1], 20.0f);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().finalize_run(ctx(), run_id));  // id released
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().wait_run(ctx(), run_id, 0));
}

TEST_P(ProgramRuns, AnUnlaunchedRunIsReleasedByFinalizeRun) {
  const int64_t id = register_callable(programs::vector_add());
  std::vector<float> a(64, 1.0f), b(64, 2.0f), c(64, 7.0f);
  ChipStorageTaskArgs args = host_args({a, b, c});
  uint64_t run_id = 0;
  ASSERT_STATUS(SIMPLER_OK,
                abi().prepare_run(ctx(), id, &args, nullptr, &run_id));  // creates the engine
  ASSERT_STATUS(SIMPLER_OK, abi().finalize_run(ctx(), run_id));
  const uint64_t before = committed(abi(), ctx());
  ASSERT_STATUS(SIMPLER_OK, abi().prepare_run(ctx(), id, &args, nullptr, &run_id));
  EXPECT_GE(committed(abi(), ctx()), before + 3 * 64 * sizeof(float));  // staging counts
  ASSERT_STATUS(SIMPLER_OK, abi().finalize_run(ctx(), run_id));
  EXPECT_EQ(committed(abi(), ctx()), before);
  EXPECT_EQ(c, std::vector<float>(64, 7.0f));
}

TEST_P(ProgramRuns, ArgsThatDisagreeWithTheSignatureAreRefused) {
  const int64_t id = register_callable(programs::vector_add());  // [IN, IN, OUT]
  std::vector<float> a(16, 1.0f), b(16, 2.0f), c(16, 0.0f);
  const uint64_t committed_before = committed(abi(), ctx());
  uint64_t run_id = 7;
  auto expect_refused = [&](const ChipStorageTaskArgs& args, const char* needle) {
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                  abi().prepare_run(ctx(), id, &args, nullptr, &run_id));
    EXPECT_NE(last_error(abi(), ctx()).find(needle), std::string::npos) << last_error(abi(), ctx());
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().run(ctx(), id, &args, nullptr));
  };
  ChipStorageTaskArgs two = host_args({a, b});
  expect_refused(two, "signature has 3 arguments");
  ChipStorageTaskArgs scalar_last = two;
  args_add_scalar(scalar_last, 1);
  expect_refused(scalar_last, "argument 2");
  ChipStorageTaskArgs foreign = two;
  int host_int = 0;
  ChipTensor fake = f32_tensor(reinterpret_cast<uint64_t>(&host_int), {1}, AddressSpace::DEVICE);
  args_add_tensor(foreign, fake);
  expect_refused(foreign, "not inside one live device allocation");
  ChipStorageTaskArgs bad_view = two;
  ChipTensor broken = host_f32(c);
  broken.ndims = 0;
  bad_view.tensors[bad_view.tensor_count++] = broken;
  expect_refused(bad_view, "argument 2");
  uint64_t u = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().prepare_run(ctx(), id + 100, &two, nullptr, &u));
  SimplerCallConfig bad_config = default_config();
  bad_config.dep_pool_size = 3;
  ChipStorageTaskArgs good = two;
  args_add_tensor(good, host_f32(c));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().prepare_run(ctx(), id, &good, &bad_config, &u));
  EXPECT_EQ(committed(abi(), ctx()), committed_before);  // nothing staged, nothing left half-done
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), id, &good, nullptr));
  EXPECT_EQ(c, std::vector<float>(16, 3.0f));
}

TEST_P(ProgramRuns, DeviceTensorsOfAnotherDeviceAreRefused) {
  const int64_t id = register_callable(programs::vector_add());
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(1));
  DeviceBuffer elsewhere(64 * sizeof(float));
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
  std::vector<float> a(64, 1.0f), b(64, 2.0f);
  ChipStorageTaskArgs args = host_args({a, b});
  args_add_tensor(args, elsewhere.f32({64}));
  uint64_t run_id = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().prepare_run(ctx(), id, &args, nullptr, &run_id));
  EXPECT_NE(last_error(abi(), ctx()).find("device 1"), std::string::npos)
      << last_error(abi(), ctx());
}

TEST_P(ProgramRuns, CallableRegistryRules) {
  std::vector<uint8_t> image = image_of(programs::vector_add());
  int64_t first = -1, second = -1, third = -1;
  const uint64_t base = committed(abi(), ctx());
  ASSERT_STATUS(SIMPLER_OK, abi().register_callable(ctx(), image.data(), image.size(), &first));
  EXPECT_GE(committed(abi(), ctx()), base + image.size());  // the code upload counts
  ASSERT_STATUS(SIMPLER_OK, abi().register_callable(ctx(), image.data(), image.size(), &second));
  EXPECT_NE(first, second);
  // Unregister refused while a prepared run uses it.
  std::vector<float> a(8, 1.0f), b(8, 1.0f), c(8, 0.0f);
  ChipStorageTaskArgs args = host_args({a, b, c});
  uint64_t run_id = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().prepare_run(ctx(), first, &args, nullptr, &run_id));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().unregister_callable(ctx(), first));
  // Counted as a user would write it: "1 prepared run", not "1 prepared run(s)".
  EXPECT_NE(last_error(abi(), ctx()).find("is used by 1 prepared run;"), std::string::npos)
      << last_error(abi(), ctx());
  ASSERT_STATUS(SIMPLER_OK, abi().launch_run(ctx(), run_id));
  ASSERT_STATUS(SIMPLER_OK, abi().finalize_run(ctx(), run_id));
  EXPECT_STATUS(SIMPLER_OK, abi().unregister_callable(ctx(), first));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().unregister_callable(ctx(), first));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().run(ctx(), first, &args, nullptr));
  // Ids are never reused.
  ASSERT_STATUS(SIMPLER_OK, abi().register_callable(ctx(), image.data(), image.size(), &third));
  EXPECT_NE(third, first);
  EXPECT_NE(third, second);
  // A truncated image names what is wrong; an unloadable one reports the loader's status.
  int64_t id = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().register_callable(ctx(), image.data(), 20, &id));
  EXPECT_EQ(id, -1);
  EXPECT_NE(last_error(abi(), ctx()).find("invalid ChipCallable image"), std::string::npos);
  std::vector<uint8_t> junk = unloadable_callable({ArgDirection::IN});
  const uint64_t before_junk = committed(abi(), ctx());
  EXPECT_STATUS(SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED,
                abi().register_callable(ctx(), junk.data(), junk.size(), &id));
  EXPECT_EQ(id, -1);
  EXPECT_EQ(committed(abi(), ctx()), before_junk);  // its upload was freed
}

TEST_P(ProgramRuns, AFailedRunReportsItsNamedStatusAndTheContextKeepsWorking) {
  const int64_t fatal = register_callable(programs::fatal());
  const int64_t add = register_callable(programs::vector_add());
  std::vector<float> x(4, 0.0f);
  ChipStorageTaskArgs args{};
  args_add_tensor(args, host_f32(x));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_ORCH_FATAL, abi().run(ctx(), fatal, &args, nullptr));
  EXPECT_NE(last_error(abi(), ctx()).find("deliberate failure"), std::string::npos)
      << last_error(abi(), ctx());
  EXPECT_EQ(x, std::vector<float>(4, 0.0f));  // no copy-back after a failed run
  std::vector<float> a(8, 1.0f), b(8, 2.0f), c(8, 0.0f);
  ChipStorageTaskArgs ok = host_args({a, b, c});
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), add, &ok, nullptr));
  EXPECT_EQ(c, std::vector<float>(8, 3.0f));
}

TEST_P(ProgramRuns, ADriverFailedLaunchIsADeviceFaultAndTheNextRunWorks) {
  const int64_t add = register_callable(programs::vector_add());
  std::vector<float> a(8, 1.0f), b(8, 2.0f), c(8, 0.0f);
  ChipStorageTaskArgs args = host_args({a, b, c});
  ASSERT_STATUS(SIMPLER_OK, sim_inject_fault("launch", 1, 0));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_DEVICE_FAULT, abi().run(ctx(), add, &args, nullptr));
  EXPECT_EQ(c, std::vector<float>(8, 0.0f));
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), add, &args, nullptr)) << last_error(abi(), ctx());
  EXPECT_EQ(c, std::vector<float>(8, 3.0f));
}

TEST_P(ProgramRuns, RingResizeIsRefusedWhileRunsArePreparedThenApplied) {
  const int64_t add = register_callable(programs::vector_add());
  std::vector<float> a(8, 1.0f), b(8, 2.0f), c(8, 0.0f);
  ChipStorageTaskArgs args = host_args({a, b, c});
  uint64_t first = 0, second = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().prepare_run(ctx(), add, &args, nullptr, &first));
  SimplerCallConfig small = default_config();
  small.task_window_size = 64;
  EXPECT_STATUS(PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE,
                abi().prepare_run(ctx(), add, &args, &small, &second));
  ASSERT_STATUS(SIMPLER_OK, abi().finalize_run(ctx(), first));
  ASSERT_STATUS(SIMPLER_OK, abi().prepare_run(ctx(), add, &args, &small, &second));
  ASSERT_STATUS(SIMPLER_OK, abi().launch_run(ctx(), second));
  ASSERT_STATUS(SIMPLER_OK, abi().finalize_run(ctx(), second));
  EXPECT_EQ(c, std::vector<float>(8, 3.0f));
}

TEST_P(ProgramRuns, AGraphThatCanNeverFitIsANamedError) {
  const int64_t id = register_callable(programs::ring_deadlock());
  std::vector<float> x(16, 1.0f);
  ChipStorageTaskArgs args{};
  args_add_tensor(args, host_f32(x));
  args_add_scalar(args, 40);  // tasks in one scope
  SimplerCallConfig small = default_config();
  small.task_window_size = 8;
  // HBG must hold the whole graph at once: capacity; TMR: a scope larger than the window.
  EXPECT_STATUS(
      GetParam().kernel_mode ? SIMPLER_CHIP_ERR_RING_DEADLOCK : PTO_RUNTIME_ERR_CAPACITY_EXCEEDED,
      abi().run(ctx(), id, &args, &small));
  EXPECT_NE(last_error(abi(), ctx()).find("run"), std::string::npos);
}

TEST_P(ProgramRuns, FinalizeDeviceWaitsForLaunchedRuns) {
  const int64_t id = register_callable(programs::sleep());
  DeviceBuffer x(2 * sizeof(float));  // framework memory on device 0, outlives the context
  const float init[2] = {1.0f, 5.0f};
  x.upload(init, sizeof init);
  ChipStorageTaskArgs args{};
  args_add_tensor(args, x.f32({2}));
  args_add_scalar(args, 200);
  uint64_t run_id = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().prepare_run(ctx(), id, &args, nullptr, &run_id));
  ASSERT_STATUS(SIMPLER_OK, abi().launch_run(ctx(), run_id));
  ASSERT_STATUS(SIMPLER_OK, abi().finalize(ctx()));
  float out[2] = {};
  x.download(out, sizeof out);
  EXPECT_EQ(out[0], 2.0f);  // the run had finished before finalize_device returned
  EXPECT_EQ(committed(abi(), ctx()), 0u);
}

TEST_P(ProgramRuns, PrewarmCreatesTheEngineAtInit) {
  Context warm(abi());
  SimplerCallConfig config = default_config();
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(warm, 1, &config));
  EXPECT_GT(committed(abi(), warm), 0u);
  EXPECT_EQ(committed(abi(), ctx()), 0u);  // no prewarm: nothing until the first run
  const int64_t id = register_callable(programs::vector_add());
  std::vector<float> a(8, 1.0f), b(8, 2.0f), c(8, 0.0f);
  ChipStorageTaskArgs args = host_args({a, b, c});
  ASSERT_STATUS(SIMPLER_OK, abi().run(ctx(), id, &args, nullptr));
  EXPECT_GT(committed(abi(), ctx()), 0u);  // the engine stays for the next run
}

INSTANTIATE_FOR_BOTH_BUILDS(ProgramRuns);

}  // namespace
}  // namespace simpler::test
