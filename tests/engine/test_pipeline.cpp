// Pipelined runs (SimplerCallConfig.pipeline_depth > 1): execute() returns once the
// orchestration returned and the run completes through its callback; the next run's tasks
// depend on the earlier runs' tasks through the tensor map (RAW, WAR, WAW) exactly as
// within one run; an error is reported on its own run only, a crash fails every run in
// flight; depth 1 is unchanged (synchronous, no callback). Both modes (TMR, HBG).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

using namespace std::chrono_literals;

// One run's completion as its callback reports it.
class Completion {
 public:
  RunDone callback() {
    return [this](int status, const std::string& message) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++calls_;
      status_ = status;
      message_ = message;
      cv_.notify_all();
    };
  }
  // Waits (bounded) for the callback; returns its status.
  int wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, 10s, [&] { return calls_ != 0; })) return 1;  // never reported
    return status_;
  }
  bool done() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_ != 0;
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  std::string message() {
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int calls_ = 0;
  int status_ = 0;
  std::string message_;
};

SimplerCallConfig depth(uint32_t d) {
  SimplerCallConfig c = default_config();
  c.pipeline_depth = d;
  return c;
}

class PipelineTest : public EngineTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    engine_ = make_engine(default_config(), GetParam());
    program_ = load(test_programs::pipeline());
    x_ = std::make_unique<DeviceBuffer>(kN * 4);
    y_ = std::make_unique<DeviceBuffer>(kN * 4);
    x_->upload(std::vector<float>(kN, 1.0f));
    y_->upload(std::vector<float>(kN, 7.0f));
  }

  // Launches one pipelined run of orch_pipeline; expects it to be deferred.
  void launch(Completion& done, int64_t mode, int64_t ms, uint32_t d = 2) {
    const SimplerCallConfig config = depth(d);
    std::string error;
    bool deferred = false;
    const int rc = engine_->execute(
        *program_, make_args({x_->tensor({kN}), y_->tensor({kN})}, {uint64_t(mode), uint64_t(ms)}),
        &config, &error, done.callback(), &deferred);
    ASSERT_EQ(rc, SIMPLER_OK) << error;
    ASSERT_TRUE(deferred) << "a run with pipeline_depth 2 must return before its tasks finished";
  }

  static constexpr int64_t kN = 16;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<LoadedProgram> program_;
  std::unique_ptr<DeviceBuffer> x_, y_;
};

INSTANTIATE_TEST_SUITE_P(Modes, PipelineTest, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(info.param ? "HBG" : "TMR"); });

// RAW across runs: run 2 reads what run 1 writes slowly.
TEST_P(PipelineTest, ReadAfterWriteAcrossRuns) {
  Completion first, second;
  launch(first, /*mode=*/0, /*ms=*/60);  // x[0] += 1 after 60 ms
  EXPECT_FALSE(first.done()) << "execute() of a pipelined run waited for its 60 ms task";
  launch(second, /*mode=*/1, /*ms=*/0);  // y = x
  ASSERT_EQ(first.wait(), SIMPLER_OK) << first.message();
  ASSERT_EQ(second.wait(), SIMPLER_OK) << second.message();
  EXPECT_EQ(y_->download<float>()[0], 2.0f) << "run 2 read x before run 1 wrote it";
}

// WAR across runs: run 2 overwrites what run 1 still reads.
TEST_P(PipelineTest, WriteAfterReadAcrossRuns) {
  Completion first, second;
  launch(first, /*mode=*/1, /*ms=*/60);  // y = x after 60 ms
  launch(second, /*mode=*/0, /*ms=*/0);  // x[0] += 1
  ASSERT_EQ(first.wait(), SIMPLER_OK) << first.message();
  ASSERT_EQ(second.wait(), SIMPLER_OK) << second.message();
  EXPECT_EQ(y_->download<float>()[0], 1.0f) << "run 2 wrote x before run 1 read it";
  EXPECT_EQ(x_->download<float>()[0], 2.0f);
}

// WAW across runs: run 2's write lands after run 1's.
TEST_P(PipelineTest, WriteAfterWriteAcrossRuns) {
  Completion first, second;
  launch(first, /*mode=*/0, /*ms=*/60);  // x[0] += 1 after 60 ms
  launch(second, /*mode=*/2, /*ms=*/0);  // x = y (7)
  ASSERT_EQ(first.wait(), SIMPLER_OK) << first.message();
  ASSERT_EQ(second.wait(), SIMPLER_OK) << second.message();
  EXPECT_EQ(x_->download<float>()[0], 7.0f) << "run 1's write landed after run 2's";
}

// The depth bounds the runs in flight: with depth 2 the third run starts only after the
// first finished.
TEST_P(PipelineTest, DepthBoundsTheRunsInFlight) {
  Completion first, second, third;
  launch(first, /*mode=*/0, /*ms=*/40);
  launch(second, /*mode=*/0, /*ms=*/40);
  launch(third, /*mode=*/0, /*ms=*/0);
  EXPECT_TRUE(first.done()) << "depth 2: the third run started while two were in flight";
  ASSERT_EQ(second.wait(), SIMPLER_OK);
  ASSERT_EQ(third.wait(), SIMPLER_OK);
  EXPECT_EQ(x_->download<float>()[0], 4.0f);
  EXPECT_EQ(first.calls(), 1);
}

// Depth 1 (and 0 = default) is today's behaviour: synchronous, the callback never called,
// and it waits for pipelined runs before it starts.
TEST_P(PipelineTest, DepthOneIsSynchronous) {
  Completion first, sync;
  launch(first, /*mode=*/0, /*ms=*/40);
  for (uint32_t d : {0u, 1u}) {
    const SimplerCallConfig config = depth(d);
    std::string error;
    bool deferred = true;
    ASSERT_EQ(engine_->execute(*program_, make_args({x_->tensor({kN}), y_->tensor({kN})}, {1, 0}),
                               &config, &error, sync.callback(), &deferred),
              SIMPLER_OK)
        << error;
    EXPECT_FALSE(deferred);
    EXPECT_TRUE(first.done()) << "a depth-1 run started before the pipelined run finished";
  }
  EXPECT_EQ(sync.calls(), 0);
  EXPECT_EQ(y_->download<float>()[0], 2.0f);
}

// An error is reported on its own run; the run pipelined after it runs as it would have
// without pipelining, and the engine stays usable.
TEST_P(PipelineTest, ErrorStaysWithItsRun) {
  auto faulty = load(test_programs::kernel_fault());
  DeviceBuffer z(kN * 4);
  z.upload(std::vector<float>(kN, 0.0f));
  Completion first, second;
  const SimplerCallConfig config = depth(2);
  std::string error;
  bool deferred = false;
  ASSERT_EQ(engine_->execute(*faulty, make_args({z.tensor({kN})}), &config, &error,
                             first.callback(), &deferred),
            SIMPLER_OK);
  ASSERT_TRUE(deferred);
  launch(second, /*mode=*/1, /*ms=*/0);  // y = x
  EXPECT_EQ(first.wait(), SIMPLER_CHIP_ERR_KERNEL_FAULT);
  EXPECT_NE(first.message().find("fault code 42"), std::string::npos) << first.message();
  EXPECT_EQ(second.wait(), SIMPLER_OK) << second.message();
  EXPECT_EQ(y_->download<float>()[0], 1.0f);
  EXPECT_EQ(engine_->sticky_error(nullptr), SIMPLER_OK);
  EXPECT_EQ(run(*engine_, *program_, make_args({x_->tensor({kN}), y_->tensor({kN})}, {0, 0})),
            SIMPLER_OK);
}

// A crash poisons the context: every run in flight fails with it, later runs are refused.
// (The orchestration crashes at once, before any submit: run 1 cannot have finished.)
TEST_P(PipelineTest, CrashFailsEveryRunInFlight) {
  auto crash = load(test_programs::crash());
  DeviceBuffer z(kN * 4);
  Completion first, second;
  launch(first, /*mode=*/0, /*ms=*/200);
  const SimplerCallConfig config = depth(2);
  std::string error;
  bool deferred = false;
  ASSERT_EQ(engine_->execute(*crash, make_args({z.tensor({kN})}, {/*NULL deref*/ 0, /*orch*/ 1}),
                             &config, &error, second.callback(), &deferred),
            SIMPLER_OK);
  EXPECT_EQ(second.wait(), SIMPLER_CHIP_ERR_ORCH_FATAL);
  EXPECT_EQ(first.wait(), SIMPLER_CHIP_ERR_ORCH_FATAL);
  EXPECT_NE(first.message().find("crashed"), std::string::npos) << first.message();
  EXPECT_EQ(run(*engine_, *program_, make_args({x_->tensor({kN}), y_->tensor({kN})}, {0, 0})),
            SIMPLER_CHIP_ERR_ORCH_FATAL);
}

// Many tasks per run, chained through one tensor across runs: x -> 2x + 1 + inner per
// outer iteration, four runs in flight.
TEST_P(PipelineTest, ChainedRunsKeepTheirNumerics) {
  auto nested = load(test_programs::nested_scopes());
  constexpr int64_t n = 1000;
  DeviceBuffer x(n * 4);
  std::vector<float> hx(n);
  for (int64_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i % 7) - 3.0f;
  x.upload(hx);
  Completion runs[6];
  const SimplerCallConfig config = depth(4);
  for (Completion& c : runs) {
    std::string error;
    bool deferred = false;
    ASSERT_EQ(engine_->execute(*nested, make_args({x.tensor({n})}, {2, 1}), &config, &error,
                               c.callback(), &deferred),
              SIMPLER_OK)
        << error;
  }
  for (Completion& c : runs) ASSERT_EQ(c.wait(), SIMPLER_OK) << c.message();
  // nested_scopes(outer=2, inner=1): x = 2x + 1 + 1 per outer iteration (and inner scope).
  std::vector<float> want = hx;
  for (int r = 0; r < 6 * 2; ++r) {
    for (float& v : want) v = 2.0f * v + 2.0f;
  }
  const auto got = x.download<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

// A pipelined run's orchestration is what the runs wait for: the orchestrating thread
// leaves the blocks it releases to a scheduler (no work-first run, no chain take-back)
// and goes on to the next run; it runs blocks only while it waits.
TEST_F(EngineTest, APipelinedOrchestrationLeavesItsBlocksToTheSchedulers) {
  auto engine = make_engine(default_config(), /*host_build_graph=*/false);
  auto program = load(test_programs::chain_tally());
  DeviceBuffer y(48 * sizeof(int32_t)), c(2 * sizeof(int32_t));
  constexpr uint64_t kTasks = 200;  // well within the task window: the submits never wait
  const SimplerCallConfig config = depth(2);
  for (int round = 0; round < 3; ++round) {
    c.upload(std::vector<int32_t>{0, 0});
    Completion done;
    std::string error;
    bool deferred = false;
    ASSERT_EQ(
        engine->execute(
            *program,
            make_args({y.tensor({48}, DataType::INT32), c.tensor({2}, DataType::INT32)}, {kTasks}),
            &config, &error, done.callback(), &deferred),
        SIMPLER_OK)
        << error;
    ASSERT_TRUE(deferred);
    ASSERT_EQ(done.wait(), SIMPLER_OK) << done.message();
    const auto counts = c.download<int32_t>();
    EXPECT_EQ(counts[0], static_cast<int32_t>(kTasks));
    EXPECT_EQ(counts[1], static_cast<int32_t>(kTasks))
        << "round " << round << ": " << kTasks - counts[1]
        << " chain tasks ran on the orchestrating thread during its orchestration";
  }
}

// `next_follows` is a hint: a run that said another follows, and then none came, still
// completes (its end wakes a scheduler when none is awake for its ready work; here every
// scheduler is parked and the run's one task is released only when the orchestration
// returned).
TEST_P(PipelineTest, ARunWhoseSuccessorNeverComesStillCompletes) {
  for (int i = 0; i < 3; ++i) {
    Completion done;
    const SimplerCallConfig config = depth(2);
    std::string error;
    bool deferred = false;
    ASSERT_EQ(engine_->execute(*program_, make_args({x_->tensor({kN}), y_->tensor({kN})}, {0, 0}),
                               &config, &error, done.callback(), &deferred,
                               /*next_follows=*/true),
              SIMPLER_OK)
        << error;
    ASSERT_TRUE(deferred);
    ASSERT_EQ(done.wait(), SIMPLER_OK) << "run " << i << " never completed";
    // Long enough for the scheduler that ran it to spin out its budget and park again.
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(x_->download<float>()[0], 4.0f);
}

TEST_F(EngineTest, PipelineDepthAboveTheLimitIsRefused) {
  auto e = make_engine();
  auto program = load(test_programs::pipeline());
  DeviceBuffer x(64), y(64);
  const SimplerCallConfig config = depth(SIMPLER_MAX_PIPELINE_DEPTH + 1);
  std::string error;
  EXPECT_EQ(e->execute(*program, make_args({x.tensor({16}), y.tensor({16})}, {0, 0}), &config,
                       &error, [](int, const std::string&) {}),
            PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("pipeline_depth: 9 is larger than the limit 8"), std::string::npos) << error;
}

}  // namespace
}  // namespace simpler::rt::testing
