// CallWait: how rank 0's caller awaits a transfer and its reply (backoff.h).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "backoff.h"

namespace simpler::mpi {
namespace {

using Step = Backoff::Step;
constexpr int64_t kSpin = 50'000'000;  // windows long enough that no preemption ends them
constexpr int64_t kMinSleep = 10'000;
constexpr int64_t kMaxSleep = 20'000;

void past_the_window() {
  std::this_thread::sleep_for(std::chrono::nanoseconds(kSpin + 10'000'000));
}

TEST(MpiCallWait, ARequestWithoutDataSleepsAfterItsWindow) {
  CallWait waiting(kSpin, /*data_in_flight=*/false, kMinSleep, kMaxSleep);
  EXPECT_NE(waiting.pause(true), Step::kSleep);
  past_the_window();
  EXPECT_EQ(waiting.pause(true), Step::kSleep);
}

TEST(MpiCallWait, DataInFlightKeepsYieldingPastTheWindow) {
  CallWait waiting(kSpin, /*data_in_flight=*/true, kMinSleep, kMaxSleep);
  past_the_window();
  EXPECT_EQ(waiting.pause(false), Step::kYield);  // it moves only while MPI is called
}

// A large transfer outlasts the first window; its reply follows within microseconds, so
// the wait for it starts a fresh window instead of sleeping (16 MiB copy_peer: a third of
// its time went to that sleep).
TEST(MpiCallWait, TheReplyAfterTheDataGetsAFreshWindowOnce) {
  CallWait waiting(kSpin, /*data_in_flight=*/true, kMinSleep, kMaxSleep);
  past_the_window();
  EXPECT_EQ(waiting.pause(false), Step::kYield);
  EXPECT_NE(waiting.pause(true), Step::kSleep);
  EXPECT_NE(waiting.pause(true), Step::kSleep);
  past_the_window();  // a reply that does not come: back to bounded sleeps
  EXPECT_EQ(waiting.pause(true), Step::kSleep);
}

}  // namespace
}  // namespace simpler::mpi
