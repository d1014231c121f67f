// simpler::Worker in program mode against the fake runtime build.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "fake_build.h"
#include "simpler/worker/worker.h"

namespace simpler {
namespace {

using testing::FakeBuild;
using testing::tiny_callable;

WorkerOptions program_options() {
  WorkerOptions o;
  o.lib_dir = FAKE_LIB_DIR;
  return o;
}

TEST(WorkerProgram, RegisterBeforeInitIsInstalledAtInit) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(program_options());
  const CallableHandle h = w.register_callable(tiny_callable());
  ChipStorageTaskArgs args{};
  EXPECT_THROW(w.run(h, args), std::runtime_error);  // before init
  w.init();
  w.run(h, args);
  EXPECT_EQ(fake.control().runs_started, 1);
  const CallableHandle late = w.register_callable(tiny_callable());
  w.run(late, args);
  w.unregister_callable(h);
  EXPECT_THROW(w.run(h, args), std::invalid_argument);
  w.close();
  w.close();  // idempotent
  EXPECT_THROW(w.run(late, args), std::runtime_error);
  EXPECT_THROW(w.register_callable(tiny_callable()), std::runtime_error);
  EXPECT_EQ(fake.live_contexts(), 0);
}

TEST(WorkerProgram, FailedInitIsRolledBack) {
  FakeBuild fake(FAKE_TMR_PATH);
  fake.control().init_device_status = PTO_RUNTIME_ERR_INVALID_STATE;
  Worker w(program_options());
  EXPECT_THROW(w.init(), ChipWorkerError);
  EXPECT_EQ(w.state(), WorkerState::FAILED);
  EXPECT_EQ(fake.live_contexts(), 0);
  w.close();
  EXPECT_EQ(w.state(), WorkerState::CLOSED);
}

TEST(WorkerProgram, RunHandleSemantics) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(program_options());
  w.init();
  const CallableHandle h = w.register_callable(tiny_callable());
  ChipStorageTaskArgs args{};
  fake.set("runs_blocked", 1);
  RunHandle run = w.submit(h, args);
  EXPECT_FALSE(run.done());
  EXPECT_THROW(run.wait(std::chrono::microseconds(2000)), WorkerTimeoutError);
  EXPECT_FALSE(run.done());  // not cancelled
  fake.set("runs_blocked", 0);
  run.wait();
  run.wait();  // idempotent
  EXPECT_TRUE(run.done());

  fake.control().run_status = SIMPLER_CHIP_ERR_KERNEL_FAULT;
  RunHandle failing = w.submit(h, args);
  for (int i = 0; i < 2; ++i) {  // the same error every time
    try {
      failing.wait();
      FAIL() << "the run should fail";
    } catch (const ChipWorkerError& e) {
      EXPECT_EQ(e.code(), SIMPLER_CHIP_ERR_KERNEL_FAULT);
    }
  }
  w.close();
}

TEST(WorkerProgram, CloseCompletesRunsInFlight) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(program_options());
  w.init();
  const CallableHandle h = w.register_callable(tiny_callable());
  ChipStorageTaskArgs args{};
  RunHandle run = w.submit(h, args);
  w.close();
  EXPECT_TRUE(run.done());
  run.wait();
}

TEST(WorkerProgram, RunsWhoseHandleWasDroppedAreCompletedByTheNextSubmit) {
  // They were held (staged copies and all) until close(): a loop that drops its handles
  // ran the device out of memory.
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(program_options());
  w.init();
  const CallableHandle h = w.register_callable(tiny_callable());
  ChipStorageTaskArgs args{};
  RunHandle kept = w.submit(h, args);
  for (int i = 0; i < 100; ++i) (void)w.submit(h, args);  // each handle dropped at once
  const int completed = fake.control().runs_finalized;
  EXPECT_GE(completed, 100 - 32);  // a pass once 32 runs are held: amortized
  // The kept run is earlier and finished: completed first (HOST outputs are copied back in
  // submission order), its result left on its handle.
  EXPECT_TRUE(kept.done());
  EXPECT_EQ(fake.control().runs_finalized, completed);
  w.close();
  EXPECT_EQ(fake.control().runs_finalized, 101);
}

TEST(WorkerProgram, BufferInUseByAnInFlightRunCannotBeReleased) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(program_options());
  w.init();
  const CallableHandle h = w.register_callable(tiny_callable());
  auto buffer = w.create_buffer(64);
  const int64_t shape[] = {16};
  ChipStorageTaskArgs args{};
  args_add_tensor(args,
                  w.make_tensor_arg(buffer->address(), buffer->nbytes(), shape, DataType::FLOAT32));
  fake.set("runs_blocked", 1);
  RunHandle run = w.submit(h, args);
  EXPECT_THROW(w.release_buffer(*buffer), std::runtime_error);
  fake.set("runs_blocked", 0);
  run.wait();
  w.release_buffer(*buffer);
  EXPECT_THROW(w.release_buffer(*buffer), std::invalid_argument);  // already released
  const int64_t too_big[] = {17};
  EXPECT_THROW(w.make_tensor_arg(buffer->address(), buffer->nbytes(), too_big, DataType::FLOAT32),
               std::invalid_argument);
  w.close();
}

TEST(WorkerProgram, MemoryErrorsAreClearAndCommittedFollowsMallocFree) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(program_options());
  EXPECT_THROW(w.malloc(16), std::runtime_error);  // before init
  w.init();
  EXPECT_EQ(w.committed_device_memory(), 0u);
  const uint64_t p = w.malloc(64);
  EXPECT_EQ(w.committed_device_memory(), 64u);
  char host[128] = {};
  EXPECT_THROW(w.copy_to(p, host, 65), std::invalid_argument);
  EXPECT_THROW(w.copy_from(host, p + 8, 64), std::invalid_argument);
  EXPECT_THROW(w.free(p + 8), std::invalid_argument);
  EXPECT_THROW(w.free(12345), std::invalid_argument);
  w.copy_to(p, "0123456789", 10);
  w.copy_from(host, p, 10);
  EXPECT_EQ(std::string(host, 10), "0123456789");
  w.free(p);
  EXPECT_THROW(w.free(p), std::invalid_argument);
  EXPECT_EQ(w.committed_device_memory(), 0u);
  EXPECT_GT(w.device_memory_info().total_bytes, 0u);
  w.malloc(32);
  w.close();
  EXPECT_EQ(w.committed_device_memory(), 0u);
}

TEST(WorkerProgram, RunsFromSeveralThreadsAreSerialized) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(program_options());
  w.init();
  const CallableHandle h = w.register_callable(tiny_callable());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      ChipStorageTaskArgs args{};
      for (int i = 0; i < 25; ++i) {
        if (i % 2) {
          w.run(h, args);
        } else {
          w.submit(h, args).wait();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fake.control().runs_started, 100);
  w.close();
}

}  // namespace
}  // namespace simpler
