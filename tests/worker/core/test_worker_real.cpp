// simpler::Worker end to end through the real runtime builds on the simulated chip.
#if WORKER_TESTS_HAVE_REAL_BUILDS
#include <gtest/gtest.h>

#include <vector>

#include "program_catalog.h"
#include "simpler/sim/sim_driver.h"
#include "simpler/worker/worker.h"

namespace simpler {
namespace {

WorkerOptions real_options(const char* mode, const char* runtime = "tensormap_and_ringbuffer",
                           int device = 0) {
  WorkerOptions o;
  o.execution_mode = mode;
  o.runtime = runtime;
  o.device_id = device;
  o.lib_dir = REAL_LIB_DIR;
  return o;
}

uint64_t count(const char* op) {
  uint64_t n = 0;
  EXPECT_EQ(sim_call_count(op, &n), SIMPLER_OK);
  return n;
}

TEST(WorkerRealBuilds, KernelModeOnTheCallersStream) {
  constexpr int64_t kN = 16384;
  ASSERT_EQ(sim_set_device(0), SIMPLER_OK);
  sim_stream_t stream = nullptr;
  ASSERT_EQ(sim_stream_create(&stream), SIMPLER_OK);
  std::vector<float> x(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i) * 0.5f - 100.0f;
  void *dx = nullptr, *dy1 = nullptr, *dy2 = nullptr;
  const size_t bytes = kN * sizeof(float);
  ASSERT_EQ(sim_malloc(&dx, bytes), SIMPLER_OK);
  ASSERT_EQ(sim_malloc(&dy1, bytes), SIMPLER_OK);
  ASSERT_EQ(sim_malloc(&dy2, bytes), SIMPLER_OK);
  ASSERT_EQ(sim_memcpy(dx, x.data(), bytes, SIM_MEMCPY_HOST_TO_DEVICE), SIMPLER_OK);
  auto args_for = [&](void* dy, float s) {
    ChipStorageTaskArgs a{};
    const int64_t shape[] = {kN};
    args_add_tensor(a, make_tensor(reinterpret_cast<uint64_t>(dx), shape, DataType::FLOAT32,
                                   AddressSpace::DEVICE));
    args_add_tensor(a, make_tensor(reinterpret_cast<uint64_t>(dy), shape, DataType::FLOAT32,
                                   AddressSpace::DEVICE));
    args_add_scalar(a, scalar_bits_from_f32(s));
    return a;
  };

  ASSERT_EQ(sim_reset_counters(), SIMPLER_OK);
  Worker w(real_options("kernel"));
  ASSERT_TRUE(w.kernel_mode_supported());
  w.init(std::nullopt, CallConfig{});
  const uint64_t committed = w.committed_device_memory();
  EXPECT_GT(committed, 0u);
  const int64_t id = w.kernel_prepare_callable(test_programs::add_scalar());
  w.kernel_launch(id, args_for(dy1, 1.5f), stream);
  w.kernel_launch(id, args_for(dy2, -3.0f), stream);
  EXPECT_EQ(w.committed_device_memory(), committed);
  ASSERT_EQ(sim_stream_synchronize(stream), SIMPLER_OK);
  std::vector<float> y1(kN), y2(kN);
  ASSERT_EQ(sim_memcpy(y1.data(), dy1, bytes, SIM_MEMCPY_DEVICE_TO_HOST), SIMPLER_OK);
  ASSERT_EQ(sim_memcpy(y2.data(), dy2, bytes, SIM_MEMCPY_DEVICE_TO_HOST), SIMPLER_OK);
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(y1[i], x[i] + 1.5f) << i;
    ASSERT_EQ(y2[i], x[i] - 3.0f) << i;
  }
  w.close();
  EXPECT_EQ(w.committed_device_memory(), 0u);
  EXPECT_EQ(count("stream_synchronize"), 1u);  // the caller's own
  EXPECT_EQ(count("set_device"), 0u);
  EXPECT_EQ(count("device_reset"), 0u);
  sim_free(dx);
  sim_free(dy1);
  sim_free(dy2);
  sim_stream_destroy(stream);
}

TEST(WorkerRealBuilds, HostBuildGraphRefusesKernelMode) {
  ASSERT_EQ(sim_set_device(0), SIMPLER_OK);
  Worker w(real_options("kernel", "host_build_graph"));
  EXPECT_FALSE(w.kernel_mode_supported());
  try {
    w.init(std::nullopt, CallConfig{});
    FAIL() << "HBG must refuse kernel mode";
  } catch (const UnsupportedRuntimeOperation& e) {
    EXPECT_NE(std::string(e.what()).find("kernel mode"), std::string::npos);
  }
  EXPECT_EQ(w.state(), WorkerState::FAILED);
  w.close();
}

TEST(WorkerRealBuilds, ProgramModeVectorAddWithHostBuffers) {
  for (const char* runtime : {"tensormap_and_ringbuffer", "host_build_graph"}) {
    Worker w(real_options("program", runtime, 1));
    const CallableHandle h = w.register_callable(test_programs::vector_add());
    w.init();
    constexpr int64_t kN = 1000;
    const int64_t shape[] = {kN};
    auto a = w.create_buffer(kN * 4), b = w.create_buffer(kN * 4), c = w.create_buffer(kN * 4);
    for (int64_t i = 0; i < kN; ++i) {
      static_cast<float*>(a->data())[i] = static_cast<float>(i);
      static_cast<float*>(b->data())[i] = static_cast<float>(2 * i);
    }
    ChipStorageTaskArgs args{};
    for (auto* buf : {a.get(), b.get(), c.get()}) {
      args_add_tensor(args,
                      w.make_tensor_arg(buf->address(), buf->nbytes(), shape, DataType::FLOAT32));
    }
    w.submit(h, args).wait();
    for (int64_t i = 0; i < kN; ++i)
      ASSERT_EQ(static_cast<float*>(c->data())[i], 3.0f * i) << runtime;
    w.close();
    EXPECT_EQ(w.committed_device_memory(), 0u);
  }
}

// A run reads what an earlier run still in flight writes into the same host memory (RAW),
// through submit and the blocking run: the old code staged c2's input before c's copy-back.
TEST(WorkerRealBuilds, ProgramModeRunsFollowEarlierWritersOfTheirHostMemory) {
  for (const char* runtime : {"tensormap_and_ringbuffer", "host_build_graph"}) {
    Worker w(real_options("program", runtime, 1));
    const CallableHandle h = w.register_callable(test_programs::vector_add());
    w.init();
    constexpr int64_t kN = 1000;
    const int64_t shape[] = {kN};
    auto a = w.create_buffer(kN * 4), c = w.create_buffer(kN * 4);
    auto c2 = w.create_buffer(kN * 4), d = w.create_buffer(kN * 4);
    for (int64_t i = 0; i < kN; ++i) static_cast<float*>(a->data())[i] = static_cast<float>(i);
    auto tensor = [&](const HostBuffer& buf) {
      return w.make_tensor_arg(buf.address(), buf.nbytes(), shape, DataType::FLOAT32);
    };
    auto args_of = [&](const HostBuffer& x, const HostBuffer& y, const HostBuffer& z) {
      ChipStorageTaskArgs args{};
      for (const HostBuffer* buf : {&x, &y, &z}) args_add_tensor(args, tensor(*buf));
      return args;
    };
    const RunHandle first = w.submit(h, args_of(*a, *a, *c));    // c = 2a
    const RunHandle second = w.submit(h, args_of(*c, *a, *c2));  // c2 = c + a = 3a
    w.run(h, args_of(*c2, *a, *d));                              // d = c2 + a = 4a
    second.wait();
    first.wait();
    for (int64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(static_cast<float*>(c2->data())[i], 3.0f * i) << runtime;
      ASSERT_EQ(static_cast<float*>(d->data())[i], 4.0f * i) << runtime;
    }
    w.close();
  }
}

}  // namespace
}  // namespace simpler
#endif  // WORKER_TESTS_HAVE_REAL_BUILDS
