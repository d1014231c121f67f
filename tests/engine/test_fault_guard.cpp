// guarded_call on its own: after each caught fault the thread runs with the signal mask
// it had before, so the next fault of any kind on that thread is caught too. The jump out
// of the handler keeps the handler's mask; ThreadSanitizer installs every handler with a
// full sa_mask (the test does the same here, so every build checks it): a mask left as
// it was in the handler blocked SIGFPE on that thread and the next division by zero ended
// the process (engine_tests under TSan, FaultsTest in one process).
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "engine/fault_guard.h"

namespace simpler::rt {
namespace {

volatile int g_zero = 0;
volatile int g_seven = 7;
volatile int g_quotient = 0;  // stored: the division cannot be dropped
int* volatile g_null = nullptr;

// The faults are the point: UBSan (ASan build) must not stop them first.
__attribute__((no_sanitize("undefined"))) void store_through_null() { *g_null = 1; }
__attribute__((no_sanitize("undefined"))) int divide(int a, int b) { return a / b; }

sigset_t current_mask() {
  sigset_t mask;
  sigemptyset(&mask);
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return mask;
}

bool same_mask(const sigset_t& a, const sigset_t& b) {
  for (int signo = 1; signo < NSIG; ++signo) {
    if (sigismember(&a, signo) != sigismember(&b, signo)) return false;
  }
  return true;
}

// Reinstalls the guard's handlers (whatever is installed now) with a full sa_mask, as
// ThreadSanitizer's sigaction does; restores them as they were afterwards.
class FullHandlerMasks {
 public:
  FullHandlerMasks() {
    for (int i = 0; i < kCount; ++i) {
      sigaction(kSignals[i], nullptr, &saved_[i]);
      struct sigaction full = saved_[i];
      sigfillset(&full.sa_mask);
      sigaction(kSignals[i], &full, nullptr);
    }
  }
  ~FullHandlerMasks() {
    for (int i = 0; i < kCount; ++i) sigaction(kSignals[i], &saved_[i], nullptr);
  }
  FullHandlerMasks(const FullHandlerMasks&) = delete;
  FullHandlerMasks& operator=(const FullHandlerMasks&) = delete;

 private:
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  static constexpr int kCount = sizeof kSignals / sizeof kSignals[0];
  struct sigaction saved_[kCount] {};
};

TEST(FaultGuard, EveryKindOfFaultIsCaughtAgainOnTheSameThread) {
  std::thread([] {
    FaultInfo fault;
    ASSERT_TRUE(guarded_call([] {}, &fault));  // installs the handlers
    const FullHandlerMasks full_masks;
    const sigset_t before = current_mask();
    for (int round = 0; round < 2; ++round) {
      ASSERT_FALSE(guarded_call([] { store_through_null(); }, &fault));
      EXPECT_EQ(fault.signo, SIGSEGV);
      EXPECT_TRUE(same_mask(current_mask(), before)) << "after SIGSEGV, round " << round;
      ASSERT_FALSE(guarded_call([] { std::abort(); }, &fault));
      EXPECT_EQ(fault.signo, SIGABRT);
      EXPECT_TRUE(same_mask(current_mask(), before)) << "after SIGABRT, round " << round;
      ASSERT_FALSE(guarded_call([] { g_quotient = divide(g_seven, g_zero); }, &fault));
      EXPECT_EQ(fault.signo, SIGFPE);
      EXPECT_TRUE(same_mask(current_mask(), before)) << "after SIGFPE, round " << round;
    }
  }).join();
}

// A stack overflow is caught only on an alternate signal stack: every thread gets one on
// its first guarded call (the set-up is per thread, checked inline on every call), and the
// first guarded call of a fresh thread may already be the one that faults.
TEST(FaultGuard, EveryThreadGetsItsAlternateStackOnItsFirstGuardedCall) {
  FaultInfo fault;
  ASSERT_TRUE(guarded_call([] {}, &fault));  // this thread is set up
  for (int thread = 0; thread < 2; ++thread) {
    std::thread([] {
      FaultInfo first;
      ASSERT_FALSE(guarded_call([] { store_through_null(); }, &first));
      EXPECT_EQ(first.signo, SIGSEGV);
      stack_t stack{};
      ASSERT_EQ(sigaltstack(nullptr, &stack), 0);
      EXPECT_EQ(stack.ss_flags & SS_DISABLE, 0) << "no alternate signal stack on this thread";
    }).join();
  }
}

}  // namespace
}  // namespace simpler::rt
