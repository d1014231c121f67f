// Every error path of a run: the status names the first error, the message says what
// happened, execute() returns (bounded time), and the engine runs the next program fine.
#include <stdlib.h>

#include "engine_test_support.h"
#include "simpler/log/log.h"

namespace simpler::rt::testing {
namespace {

class ErrorPathsTest : public EngineTest {
 protected:
  // One run: its status is `status` and its message contains `fragment` (any, if empty).
  static ::testing::AssertionResult runs_as(Engine& e, const LoadedProgram& program,
                                            const ChipStorageTaskArgs& args, int status,
                                            const std::string& fragment = "",
                                            const SimplerCallConfig* run_config = nullptr) {
    std::string error;
    const int rc = run(e, program, args, &error, run_config);
    if (rc != status) {
      return ::testing::AssertionFailure()
             << "status " << rc << ", expected " << status << ": " << error;
    }
    if (error.find(fragment) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << fragment << "': " << error;
    }
    return ::testing::AssertionSuccess();
  }

  // test_programs::misuse()'s case `id` (its scalar) over a 1024-float buffer.
  static ChipStorageTaskArgs misuse_case(const DeviceBuffer& x, uint64_t id) {
    return make_args({x.tensor({1024})}, {id});
  }

  // The engine must still be usable after the failure.
  void expect_engine_still_works(Engine& e) {
    constexpr int64_t n = 256;
    DeviceBuffer a(n * 4), b(n * 4), c(n * 4);
    a.upload(std::vector<float>(n, 1.5f));
    b.upload(std::vector<float>(n, 2.0f));
    auto program = load(test_programs::vector_add());
    ASSERT_TRUE(
        runs_as(e, *program, make_args({a.tensor({n}), b.tensor({n}), c.tensor({n})}), SIMPLER_OK));
    EXPECT_EQ(c.download<float>(), std::vector<float>(n, 3.5f));
  }
};

TEST_F(ErrorPathsTest, OrchestrationFatalLatchesItsMessage) {
  auto program = load(test_programs::fatal());
  auto e = make_engine();
  DeviceBuffer x(64);
  EXPECT_TRUE(runs_as(*e, *program, make_args({x.tensor({16})}), SIMPLER_CHIP_ERR_ORCH_FATAL,
                      "deliberate failure requested by orch_fatal"));
  expect_engine_still_works(*e);
}

struct MisuseCase {
  uint64_t id;
  int32_t status;
  const char* message;  // a fragment the latched message must contain
};

TEST_F(ErrorPathsTest, OrchestrationApiMisuseIsNamed) {
  auto program = load(test_programs::misuse());
  SimplerCallConfig config = default_config();
  config.tensormap_capacity = 16;  // case 8: 64 live writes in one scope overflow it
  auto e = make_engine(config);
  DeviceBuffer x(1024 * 4);
  const std::vector<MisuseCase> cases = {
      {1, SIMPLER_CHIP_ERR_INVALID_ARGS, "block_num 0"},
      {2, SIMPLER_CHIP_ERR_KERNEL_NOT_FOUND, "func_id 9 is not a child kernel"},
      {3, SIMPLER_CHIP_ERR_INVALID_ARGS, "scope_end without scope_begin"},
      {4, SIMPLER_CHIP_ERR_INVALID_ARGS, "HOST space"},
      {5, SIMPLER_CHIP_ERR_INVALID_ARGS,
       "takes 1 tensor and 1 scalar, the task passes 1 tensor and 0 scalars"},
      {6, SIMPLER_CHIP_ERR_INVALID_ARGS, "after_task was already released for execution"},
      {7, SIMPLER_CHIP_ERR_ORCH_FATAL, "returned 7"},
      {8, SIMPLER_CHIP_ERR_TENSORMAP_OVERFLOW, "tensormap_capacity"},
      {9, SIMPLER_CHIP_ERR_INVALID_ARGS, "OUT_ALLOC does not fit the kernel signature's INOUT"},
      {10, SIMPLER_CHIP_ERR_INVALID_ARGS, "block_num 0"},
      {12, SIMPLER_CHIP_ERR_INVALID_ARGS, "alloc_tensor: ndims 0"},
      {13, SIMPLER_CHIP_ERR_INVALID_ARGS, "read_value: index 1024 is outside"},
      {15, SIMPLER_CHIP_ERR_INVALID_ARGS, "write_value: bytes ["},
      {16, SIMPLER_CHIP_ERR_INVALID_ARGS, "run past the end of their allocation"},
      {17, SIMPLER_CHIP_ERR_INVALID_ARGS, "read_value: bytes ["},
      // A view accepted once, then changed in one field (view_cache.h must miss).
      {20, SIMPLER_CHIP_ERR_INVALID_ARGS,
       "the view reaches byte 4100 but the buffer has only 4096"},
      {21, SIMPLER_CHIP_ERR_INVALID_ARGS, "run past the end of their allocation"},
      {22, SIMPLER_CHIP_ERR_INVALID_ARGS, "start_offset: -1 is negative"},
      {23, SIMPLER_CHIP_ERR_INVALID_ARGS,
       "the view reaches byte 6004 but the buffer has only 4096"},
      // After case 23's run: a rank-0 descriptor equal to what the view cache kept then.
      {26, SIMPLER_CHIP_ERR_INVALID_ARGS, "tensor 0: ndims: 0 is out of range"},
  };
  for (const MisuseCase& c : cases) {
    EXPECT_TRUE(runs_as(*e, *program, misuse_case(x, c.id), c.status, c.message))
        << "case " << c.id;
  }
  expect_engine_still_works(*e);
}

// Addresses an orchestration hands the runtime are checked against the device's live
// allocations: host memory, a buffer claiming more than its allocation.
TEST_F(ErrorPathsTest, OrchestrationAddressesOutsideDeviceMemoryAreRefused) {
  auto program = load(test_programs::misuse());
  auto e = make_engine();
  DeviceBuffer x(1024 * 4);
  EXPECT_TRUE(runs_as(*e, *program, misuse_case(x, 15), SIMPLER_CHIP_ERR_INVALID_ARGS,
                      "are not device memory"));
  EXPECT_TRUE(runs_as(*e, *program, misuse_case(x, 16), SIMPLER_CHIP_ERR_INVALID_ARGS,
                      "tensor 0: bytes [" + std::to_string(reinterpret_cast<uintptr_t>(x.data())) +
                          ", +1099511627776) run past the end of their allocation"));
  // Memory of another device is not this run's either.
  ASSERT_EQ(sim_set_device(1), SIMPLER_OK);
  void* other = nullptr;
  ASSERT_EQ(sim_malloc(&other, 4096), SIMPLER_OK);
  ASSERT_EQ(sim_set_device(kDevice), SIMPLER_OK);
  ChipTensor foreign = x.tensor({1024});
  foreign.buffer.addr = reinterpret_cast<uintptr_t>(other);
  EXPECT_TRUE(runs_as(*e, *program, make_args({foreign}, {6}), SIMPLER_CHIP_ERR_INVALID_ARGS,
                      "are memory of device 1; this run executes on device 0"));
  ASSERT_EQ(sim_free(other), SIMPLER_OK);
  expect_engine_still_works(*e);
}

// What a run learnt about its tensors does not outlive it: a view of a scope-less
// allocation (freed when its run ended) is refused in the next run.
TEST_F(ErrorPathsTest, AViewOfMemoryFreedWithAnEarlierRunIsRefused) {
  auto program = load(test_programs::misuse());
  auto e = make_engine();
  DeviceBuffer x(1024 * 4);
  ASSERT_TRUE(runs_as(*e, *program, misuse_case(x, 24), SIMPLER_OK));
  EXPECT_TRUE(runs_as(*e, *program, misuse_case(x, 25), SIMPLER_CHIP_ERR_INVALID_ARGS,
                      "are not device memory"));
  expect_engine_still_works(*e);
}

// What a run learnt about its views outlives it only while nothing on the device is
// freed: a buffer freed and re-allocated at the same address with a smaller size, named
// again with its old size by the next run's task, is refused as past its end (a stale
// view-cache or address-cache entry would accept it).
TEST_F(ErrorPathsTest, AViewOfAnAddressFreedAndReallocatedSmallerIsRefused) {
  auto program = load(test_programs::misuse());
  auto e = make_engine();
  constexpr uint64_t kOld = 1024 * 4;
  constexpr uint64_t kNew = kOld / 2;
  void* p = nullptr;
  ASSERT_EQ(sim_malloc(&p, kOld), SIMPLER_OK);
  const int64_t old_shape[1] = {1024};
  const int64_t new_shape[1] = {512};
  const ChipTensor old_view = make_tensor(reinterpret_cast<uint64_t>(p), old_shape,
                                          DataType::FLOAT32, AddressSpace::DEVICE, kOld);
  const ChipStorageTaskArgs args = make_args({old_view}, {27});  // a task on it
  ASSERT_TRUE(runs_as(*e, *program, args, SIMPLER_OK));
  ASSERT_TRUE(runs_as(*e, *program, args, SIMPLER_OK));  // kept across the runs
  // The same address again, smaller (first fit: allocate until it comes back).
  ASSERT_EQ(sim_free(p), SIMPLER_OK);
  std::vector<void*> others;
  void* q = nullptr;
  for (int i = 0; i < 64 && q != p; ++i) {
    ASSERT_EQ(sim_malloc(&q, kNew), SIMPLER_OK);
    if (q != p) others.push_back(q);
  }
  ASSERT_EQ(q, p) << "the driver did not hand the freed address out again";
  EXPECT_TRUE(runs_as(*e, *program, args, SIMPLER_CHIP_ERR_INVALID_ARGS,
                      "run past the end of their allocation"));
  // Named with its new size, it is accepted again.
  const ChipStorageTaskArgs fits =
      make_args({make_tensor(reinterpret_cast<uint64_t>(q), new_shape, DataType::FLOAT32,
                             AddressSpace::DEVICE, kNew)},
                {27});
  EXPECT_TRUE(runs_as(*e, *program, fits, SIMPLER_OK));
  ASSERT_EQ(sim_free(q), SIMPLER_OK);
  for (void* o : others) ASSERT_EQ(sim_free(o), SIMPLER_OK);
  expect_engine_still_works(*e);
}

// The API table an orchestration receives is its run's own: scribbling over it cannot
// break the next run of another program.
TEST_F(ErrorPathsTest, AnOrchestrationThatOverwritesItsApiTableBreaksNoLaterRun) {
  auto program = load(test_programs::misuse());
  auto e = make_engine();
  DeviceBuffer x(1024 * 4);
  ASSERT_TRUE(runs_as(*e, *program, misuse_case(x, 18), SIMPLER_OK));
  expect_engine_still_works(*e);
}

// A scope-less allocation lives until the run ends but does not pin the heap ring: scoped
// blocks allocated after it are still reclaimed (before, a ring deadlock).
TEST_F(ErrorPathsTest, AScopeLessAllocationDoesNotPinTheHeapRing) {
  auto program = load(test_programs::misuse());
  SimplerCallConfig config = default_config();
  config.heap_ring_bytes = 64 * 1024;
  auto e = make_engine(config);
  DeviceBuffer x(1024 * 4);
  EXPECT_TRUE(runs_as(*e, *program, misuse_case(x, 19), SIMPLER_OK));
  expect_engine_still_works(*e);
}

// The orchestration's api->log goes through the process's log sink (simpler/log/log.h):
// component "orch", the program's name first, filtered by the sink's threshold (default
// WARNING); the default sink writes one line on stderr.
TEST_F(ErrorPathsTest, OrchestrationLogGoesThroughTheLogSink) {
  auto program = load(test_programs::misuse());
  DeviceBuffer x(1024 * 4);
  const int saved = simpler_log_threshold();
  for (const int threshold :
       {SIMPLER_LOG_LEVEL_WARNING, SIMPLER_LOG_LEVEL_INFO, SIMPLER_LOG_LEVEL_DEBUG}) {
    simpler_log_set_threshold(threshold);
    auto e = make_engine();
    std::string error;
    ::testing::internal::CaptureStderr();
    const int rc = run(*e, *program, misuse_case(x, 11), &error);
    const std::string out = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, SIMPLER_OK) << error;
    EXPECT_NE(out.find("simpler ERROR orch: orch_misuse: orch-log-error"), std::string::npos)
        << out;
    EXPECT_EQ(out.find("simpler INFO orch: orch_misuse: orch-log-info") != std::string::npos,
              threshold <= SIMPLER_LOG_LEVEL_INFO)
        << out;
    EXPECT_EQ(out.find("orch-log-debug") != std::string::npos, threshold <= SIMPLER_LOG_LEVEL_DEBUG)
        << out;
  }
  simpler_log_set_threshold(saved);
}

TEST_F(ErrorPathsTest, RuntimeAllocationsAreAlignedDeviceTensors) {
  auto program = load(test_programs::misuse());
  auto e = make_engine();
  DeviceBuffer x(1024 * 4);
  EXPECT_TRUE(runs_as(*e, *program, misuse_case(x, 14), SIMPLER_OK));
}

TEST_F(ErrorPathsTest, ScopeLargerThanTheTaskWindowIsARingDeadlock) {
  auto program = load(test_programs::ring_deadlock());
  SimplerCallConfig config = default_config();
  config.task_window_size = 16;
  auto e = make_engine(config);
  DeviceBuffer x(256 * 4);
  EXPECT_TRUE(runs_as(*e, *program, make_args({x.tensor({256})}, {40}),
                      SIMPLER_CHIP_ERR_RING_DEADLOCK, "task window"));
  expect_engine_still_works(*e);
  // The same program fits when the scope fits the window.
  EXPECT_TRUE(runs_as(*e, *program, make_args({x.tensor({256})}, {12}), SIMPLER_OK));
}

TEST_F(ErrorPathsTest, ScopeLargerThanTheHeapRingIsARingDeadlock) {
  auto program = load(test_programs::ring_deadlock());
  SimplerCallConfig config = default_config();
  config.heap_ring_bytes = 16384;  // four 4 KiB outputs
  auto e = make_engine(config);
  DeviceBuffer x(1024 * 4);
  EXPECT_TRUE(runs_as(*e, *program, make_args({x.tensor({1024})}, {10}),
                      SIMPLER_CHIP_ERR_RING_DEADLOCK, "heap ring"));
  DeviceBuffer big(8192 * 4);  // one 32 KiB output can never fit
  EXPECT_TRUE(runs_as(*e, *program, make_args({big.tensor({8192})}, {1}),
                      SIMPLER_CHIP_ERR_RING_DEADLOCK, "can never fit"));
  expect_engine_still_works(*e);
}

TEST_F(ErrorPathsTest, KernelFaultFailsTheRunAndSkipsDependents) {
  auto program = load(test_programs::kernel_fault());
  auto e = make_engine();
  DeviceBuffer x(16 * 4);
  x.upload(std::vector<float>(16, 1.0f));
  EXPECT_TRUE(runs_as(*e, *program, make_args({x.tensor({16})}), SIMPLER_CHIP_ERR_KERNEL_FAULT,
                      "fault code 42"));
  EXPECT_EQ(x.download<float>(), std::vector<float>(16, 1.0f))
      << "dependents of the faulted task ran";
  expect_engine_still_works(*e);
}

TEST_F(ErrorPathsTest, HostBuiltGraphLargerThanTheWindowIsCapacityExceeded) {
  SimplerCallConfig config = default_config();
  config.task_window_size = 8;
  auto e = make_engine(config, /*build_graph_first=*/true);
  auto program = load(test_programs::nested_scopes());
  DeviceBuffer x(64 * 4);
  // 5 x (2 + 3) = 25 tasks > 8.
  EXPECT_TRUE(runs_as(*e, *program, make_args({x.tensor({64})}, {5, 3}),
                      PTO_RUNTIME_ERR_CAPACITY_EXCEEDED, "task_window_size"));
  // One iteration (5 tasks) fits.
  x.upload(std::vector<float>(64, 1.0f));
  EXPECT_TRUE(runs_as(*e, *program, make_args({x.tensor({64})}, {1, 3}), SIMPLER_OK));
  EXPECT_EQ(x.download<float>(), std::vector<float>(64, 2.0f * 1.0f + 1.0f + 3.0f));
}

TEST_F(ErrorPathsTest, EntryArgsThatDisagreeWithTheSignatureAreRefusedBeforeRunning) {
  auto program = load(test_programs::vector_add());
  auto e = make_engine();
  DeviceBuffer a(64), b(64), c(64);
  EXPECT_TRUE(runs_as(*e, *program, make_args({a.tensor({16}), b.tensor({16})}),
                      PTO_RUNTIME_ERR_INVALID_ARGUMENT, "signature"));
  ChipTensor host = c.tensor({16});
  host.space = CHIP_SPACE_HOST;
  EXPECT_TRUE(runs_as(*e, *program, make_args({a.tensor({16}), b.tensor({16}), host}),
                      PTO_RUNTIME_ERR_INVALID_ARGUMENT, "HOST"));
  SimplerCallConfig bad = default_config();
  bad.flags = SIMPLER_CFG_SWIMLANE;  // without an output_prefix
  EXPECT_TRUE(runs_as(*e, *program, make_args({a.tensor({16}), b.tensor({16}), c.tensor({16})}),
                      PTO_RUNTIME_ERR_INVALID_ARGUMENT, "output_prefix", &bad));
  expect_engine_still_works(*e);
}

}  // namespace
}  // namespace simpler::rt::testing
