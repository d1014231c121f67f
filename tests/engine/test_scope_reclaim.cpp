// Tasks of a scope are reclaimed as soon as the scope ended: the orchestrator remembers
// that its oldest task is pinned (so a submit stops there at one compare) only until a
// scope ends. An orchestrator on a chip with no scheduler threads, so every block runs on
// this thread and the window's occupancy does not depend on timing.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/orchestrator.h"
#include "engine_test_support.h"
#include "simpler/abi/status.h"
#include "test_orchestrator_sizes.h"

namespace simpler::rt {

class OrchestratorScopeReclaim;

namespace {

constexpr int32_t kAdd = 1;  // INOUT x: x[0] += 1
constexpr uint64_t kWindow = 16;
constexpr int kScopes = 5;
constexpr int kPerScope = 12;  // under the window, but two scopes are not

ChipTensor g_x{};
Orchestrator* g_orch = nullptr;
std::vector<uint64_t> g_in_flight;  // after the first submit of each scope

void add_kernel(int64_t* args) {
  const auto* t = reinterpret_cast<const ChipTensor*>(static_cast<intptr_t>(args[0]));
  reinterpret_cast<float*>(static_cast<uintptr_t>(t->buffer.addr))[t->start_offset] += 1.0f;
}

int orchestration(const ChipStorageTaskArgs* /*args*/, const SimplerOrchApi* api);

}  // namespace

class OrchestratorScopeReclaim : public testing::DirectOrchestratorTest {
 public:
  static uint64_t in_flight() { return g_orch->head_ - g_orch->tail_; }

 protected:
  void SetUp() override {
    set_up(kWindow);
    orch_->inline_sense_.hold(0);  // short blocks: each runs at the next submit
    add_inout_kernel(kAdd, add_kernel);
    program_.func_name = "scope_reclaim_test";
    program_.orchestration = orchestration;
    g_x = x_->tensor({16});
    g_orch = orch_.get();
    g_in_flight.clear();
  }
};

namespace {

int orchestration(const ChipStorageTaskArgs* /*args*/, const SimplerOrchApi* api) {
  const SimplerTaskDesc d = testing::inout_task(kAdd, g_x);
  SimplerTaskResult r{};
  for (int s = 0; s < kScopes; ++s) {
    if (int rc = api->scope_begin(api->rt)) return rc;
    for (int i = 0; i < kPerScope; ++i) {
      if (int rc = api->submit(api->rt, &d, &r)) return rc;
      if (i == 0) g_in_flight.push_back(OrchestratorScopeReclaim::in_flight());
    }
    if (int rc = api->scope_end(api->rt)) return rc;
  }
  return 0;
}

}  // namespace

TEST_F(OrchestratorScopeReclaim, AScopesTasksAreReclaimedAtTheNextSubmitAfterItEnds) {
  RunTrack* track = orch_->begin_run(program_, RunOptions{});
  ChipStorageTaskArgs args{};
  orch_->run(args);
  ASSERT_EQ(track->status.code(), SIMPLER_OK) << track->status.message();
  EXPECT_EQ(x_->download<float>()[0], static_cast<float>(kScopes * kPerScope));
  ASSERT_EQ(g_in_flight.size(), static_cast<size_t>(kScopes));
  // Behind the first submit of a scope: the previous scope's last task (still held by its
  // guard) and the new one; everything before them completed and is reclaimed at once.
  for (int s = 1; s < kScopes; ++s) EXPECT_LE(g_in_flight[s], 2u) << "scope " << s;
}

}  // namespace simpler::rt
