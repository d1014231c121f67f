// The immediate run (src/engine/immediate_run.cpp): a task submitted while nothing is in
// flight runs at its submit, as a core, under the fault guard; a task with an unfinished
// producer never does. An orchestrator on a chip with no scheduler threads, so every
// block runs on this thread and the outcome does not depend on timing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_defaults.h"
#include "engine/orchestrator.h"
#include "engine_test_support.h"
#include "simpler/abi/status.h"
#include "test_orchestrator_sizes.h"

namespace simpler::rt {

namespace {

constexpr int32_t kAdd = 1;       // INOUT x: x[0] += 1
constexpr int32_t kCrash = 2;     // INOUT x: null dereference
constexpr int32_t kScribble = 3;  // INOUT x: x[0] += 1, then overwrites its argv and descriptor
constexpr uint64_t kWindow = 16;

// What the kernels saw; the orchestration's script (set per test).
const ChipTensor* g_immediate_copy = nullptr;  // the orchestrator's immediate descriptors
int g_runs = 0;
int g_immediate_runs = 0;
std::vector<float> g_seen;  // x[0] as each kAdd block found it
std::vector<int> g_runs_after_submit;
std::vector<int> g_submit_rc;
int g_add_dependency_rc = -1;
bool g_caller_desc_kept = false;  // kScribbleThenChain: the caller's descriptor after the submit
ChipTensor g_x{};
enum class Script {
  kChain,
  kAfterSpmd,
  kChainAfterSpmd,
  kInScope,
  kCrashThenSubmit,
  kDependencyOnLatest,
  kDependencyOnOlder,
  kScribbleThenChain
};
Script g_script = Script::kChain;

float* data(const ChipTensor& t) {
  return reinterpret_cast<float*>(static_cast<uintptr_t>(t.buffer.addr)) + t.start_offset;
}

void add_kernel(int64_t* args) {
  const auto* t = reinterpret_cast<const ChipTensor*>(static_cast<intptr_t>(args[0]));
  if (t == g_immediate_copy) ++g_immediate_runs;
  ++g_runs;
  g_seen.push_back(data(*t)[0]);
  data(*t)[0] += 1.0f;
}

// What a kernel may do to what it was given: its argument vector (the context slot before
// it too) and its descriptor are its own copies; the next task must not see any of it.
void scribble_kernel(int64_t* args) {
  add_kernel(args);
  auto* t = reinterpret_cast<ChipTensor*>(static_cast<intptr_t>(args[0]));
  t->buffer.addr = 0;
  t->shapes[0] = -1;
  args[-1] = 0;
  args[0] = 0;
}

int* volatile g_null = nullptr;
// The fault is the point: UBSan must not report it before the guard sees SIGSEGV.
__attribute__((no_sanitize("undefined"))) void store_through_null() { *g_null = 1; }

void crash_kernel(int64_t* args) {
  const auto* t = reinterpret_cast<const ChipTensor*>(static_cast<intptr_t>(args[0]));
  if (t == g_immediate_copy) ++g_immediate_runs;
  ++g_runs;
  store_through_null();
}

int submit(const SimplerOrchApi* api, int32_t func, uint32_t blocks = 1,
           uint64_t* task_id = nullptr) {
  SimplerTaskDesc d = testing::inout_task(func, g_x, blocks);
  SimplerTaskResult r{};
  const int rc = api->submit(api->rt, &d, &r);
  g_submit_rc.push_back(rc);
  g_runs_after_submit.push_back(g_runs);
  if (task_id != nullptr) *task_id = r.task_id;
  return rc;
}

int orchestration(const ChipStorageTaskArgs* /*args*/, const SimplerOrchApi* api) {
  switch (g_script) {
    case Script::kChain:
      for (int i = 0; i < 40; ++i) submit(api, kAdd);  // 2.5 windows
      return 0;
    case Script::kAfterSpmd:
      // The SPMD task is held (the latest task keeps its guard): the next task has an
      // unfinished producer and must not run before it.
      submit(api, kAdd, /*blocks=*/2);
      submit(api, kAdd);
      return 0;
    case Script::kChainAfterSpmd:
      submit(api, kAdd, /*blocks=*/2);
      for (int i = 0; i < 10; ++i) submit(api, kAdd);
      return 0;
    case Script::kInScope:
      api->scope_begin(api->rt);
      submit(api, kAdd);
      submit(api, kAdd);
      api->scope_end(api->rt);
      return 0;
    case Script::kCrashThenSubmit:
      submit(api, kAdd);
      submit(api, kCrash);
      submit(api, kAdd);
      return 0;
    case Script::kDependencyOnLatest: {
      uint64_t first = 0;
      uint64_t second = 0;
      submit(api, kAdd, 1, &first);
      submit(api, kAdd, 1, &second);
      g_add_dependency_rc = api->add_dependency(api->rt, first, second);
      return 0;
    }
    case Script::kScribbleThenChain: {
      SimplerTaskDesc d = testing::inout_task(kScribble, g_x, 1);
      const SimplerTaskDesc before = d;
      SimplerTaskResult r{};
      g_submit_rc.push_back(api->submit(api->rt, &d, &r));
      g_runs_after_submit.push_back(g_runs);
      g_caller_desc_kept = std::memcmp(&before, &d, sizeof d) == 0;
      submit(api, kAdd);
      submit(api, kAdd);
      return 0;
    }
    case Script::kDependencyOnOlder: {  // the second is no longer the latest task
      uint64_t first = 0;
      uint64_t second = 0;
      submit(api, kAdd, 1, &first);
      submit(api, kAdd, 1, &second);
      submit(api, kAdd);
      g_add_dependency_rc = api->add_dependency(api->rt, first, second);
      return 0;
    }
  }
  return 0;
}

}  // namespace

class OrchestratorImmediateRun : public testing::DirectOrchestratorTest {
 protected:
  void SetUp() override {
    set_up(kWindow);
    orch_->inline_sense_.hold(0);  // short blocks, however long a preempted sample looks
    add_inout_kernel(kAdd, add_kernel);
    add_inout_kernel(kCrash, crash_kernel);
    add_inout_kernel(kScribble, scribble_kernel);
    program_.func_name = "immediate_test";
    program_.orchestration = orchestration;
    g_immediate_copy = &orch_->immediate_tensors_[0];
    g_x = x_->tensor({16});
    g_runs = g_immediate_runs = 0;
    g_add_dependency_rc = -1;
    g_caller_desc_kept = false;
    g_seen.clear();
    g_runs_after_submit.clear();
    g_submit_rc.clear();
  }
  // Runs the script; returns the run's status (`message`: its text).
  int run(Script script, std::string* message = nullptr, RunOptions options = {}) {
    g_script = script;
    RunTrack* track = orch_->begin_run(program_, options);
    ChipStorageTaskArgs args{};
    orch_->run(args);
    if (message != nullptr) *message = track->status.message();
    return track->status.code();
  }
  float x0() { return x_->download<float>()[0]; }
};

TEST_F(OrchestratorImmediateRun, AChainRunsEachTaskAtItsOwnSubmit) {
  ASSERT_EQ(run(Script::kChain), SIMPLER_OK);
  EXPECT_EQ(g_immediate_runs, 40) << "every task of the chain should take the immediate path";
  for (int i = 0; i < 40; ++i) EXPECT_EQ(g_runs_after_submit[i], i + 1) << "task " << i;
  for (int i = 0; i < 40; ++i) EXPECT_EQ(g_seen[i], static_cast<float>(i));
  EXPECT_EQ(x0(), 40.0f);
  // Nothing went through the window: a second run starts from a clean state.
  ASSERT_EQ(run(Script::kChain), SIMPLER_OK);
  EXPECT_EQ(x0(), 80.0f);
}

TEST_F(OrchestratorImmediateRun, ATaskWithAnUnfinishedProducerNeverRunsImmediately) {
  ASSERT_EQ(run(Script::kAfterSpmd), SIMPLER_OK);
  // Two SPMD blocks, then the consumer: each saw the value its predecessors left.
  ASSERT_EQ(g_seen.size(), 3u);
  EXPECT_EQ(g_seen[2], 2.0f) << "the consumer ran before its producer's blocks";
  EXPECT_EQ(g_immediate_runs, 0);
  EXPECT_EQ(x0(), 3.0f);
}

// A chain that took the queued path once (behind the SPMD task) comes back: the submit runs
// the held latest task first when nothing holds it back, and then nothing is in flight.
TEST_F(OrchestratorImmediateRun, AChainComesBackToTheImmediatePath) {
  ASSERT_EQ(run(Script::kChainAfterSpmd), SIMPLER_OK);
  for (size_t i = 0; i < g_seen.size(); ++i) EXPECT_EQ(g_seen[i], static_cast<float>(i));
  EXPECT_EQ(x0(), 12.0f);
  EXPECT_GE(g_immediate_runs, 8) << "the chain stayed on the queued path";
}

TEST_F(OrchestratorImmediateRun, TasksInAScopeOrUnderAGraphObserverAreQueued) {
  ASSERT_EQ(run(Script::kInScope), SIMPLER_OK);
  EXPECT_EQ(g_immediate_runs, 0);
  EXPECT_EQ(x0(), 2.0f);
  struct Graph : RunObserver {
    int edges = 0;
    void set_up(uint32_t) override {}
    void on_entry(uint32_t, const BlockView&) override {}
    void on_exit(uint32_t, const BlockView&) override {}
    void on_task(const TaskView&) override {}
    void on_dependency(uint64_t, uint64_t) override { ++edges; }
  } graph;
  RunOptions observed;
  observed.observer = &graph;
  ASSERT_EQ(run(Script::kChain, nullptr, observed), SIMPLER_OK);
  EXPECT_EQ(g_immediate_runs, 0);
  EXPECT_EQ(graph.edges, 39) << "the dependency graph must keep every edge of the chain";
  EXPECT_EQ(x0(), 42.0f);
}

TEST_F(OrchestratorImmediateRun, AFaultInAnImmediateTaskIsNamedAndSticky) {
  std::string message;
  EXPECT_EQ(run(Script::kCrashThenSubmit, &message), SIMPLER_CHIP_ERR_KERNEL_FAULT);
  EXPECT_EQ(g_immediate_runs, 2) << "the first task and the crashing one run at their submit";
  EXPECT_NE(message.find("kernel func_id 2 crashed with SIGSEGV"), std::string::npos) << message;
  EXPECT_NE(message.find("task 1 (the 2nd task"), std::string::npos) << message;
  EXPECT_NE(message.find("on AIV core"), std::string::npos) << message;
  ASSERT_EQ(g_submit_rc.size(), 3u);
  EXPECT_EQ(g_submit_rc[2], SIMPLER_CHIP_ERR_KERNEL_FAULT) << "the failure must be sticky";
  EXPECT_EQ(g_runs, 2) << "nothing runs after the fault";
  EXPECT_TRUE(chip_.poisoned.load());
}

// The immediate run builds the kernel's argument vector in place (no second copy): it must
// build it again for every task, and the descriptors are the kernel's own copies. Fails when
// the vector or the descriptor copy is reused as the previous kernel left it (the next
// kernel would read a null descriptor), or when the kernel gets the caller's descriptor.
TEST_F(OrchestratorImmediateRun, WhatAKernelWritesToItsArgumentsNeverReachesTheNextTask) {
  ASSERT_EQ(run(Script::kScribbleThenChain), SIMPLER_OK);
  EXPECT_EQ(g_immediate_runs, 3);
  ASSERT_EQ(g_seen.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(g_seen[i], static_cast<float>(i));
  EXPECT_EQ(x0(), 3.0f);
  EXPECT_TRUE(g_caller_desc_kept) << "the kernel's writes reached the caller's descriptor";
}

TEST_F(OrchestratorImmediateRun, AddDependencyOnTheLatestImmediateTaskHolds) {
  ASSERT_EQ(run(Script::kDependencyOnLatest), SIMPLER_OK);
  EXPECT_EQ(g_immediate_runs, 2);
  EXPECT_EQ(g_add_dependency_rc, SIMPLER_OK);
}

// As when the second task was released by the queued path: the same refusal and message.
TEST_F(OrchestratorImmediateRun, AddDependencyOnAnOlderImmediateTaskIsRefused) {
  std::string message;
  EXPECT_EQ(run(Script::kDependencyOnOlder, &message), SIMPLER_CHIP_ERR_INVALID_ARGS);
  EXPECT_EQ(g_immediate_runs, 3);
  EXPECT_EQ(g_add_dependency_rc, SIMPLER_CHIP_ERR_INVALID_ARGS);
  EXPECT_NE(message.find("add_dependency(0, 1): after_task was already released for execution"),
            std::string::npos)
      << message;
}

}  // namespace simpler::rt
