// simpler runtime — user-level threads (fibers) for the parts of a cluster task that run
// cooperatively on one host thread (internal; cluster_fibers.h).
//
// A fiber runs a function on its own stack; the thread that resumes it runs it until the
// function yields (Fiber::yield) or returns. No scheduler here: the caller decides which
// fiber to resume. The stack is mapped once (lazily committed, a guard page below it, so
// an overflow faults like a thread's) and reused by every later start.
//
// What follows the switch: the fault guard's recovery chain (fault_guard.h: a fiber's
// guards are its own; a fault longjmps within its stack), and the sanitizers' view of the
// stack (ASan's fake stacks, TSan's per-fiber clocks), annotated as both document.
//
// The switch: on x86-64 a few instructions that save the callee-saved registers and the
// floating-point control words on the old stack and load them from the new one.
// ucontext's swapcontext also saves and restores the signal mask, two system calls per
// switch (about ten per cluster task), which nothing here needs: the mask is the
// thread's, and no fiber changes it. Elsewhere the fibers use ucontext.
#pragma once

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <cstddef>

namespace simpler::rt {

class Fiber {
 public:
  using Fn = void (*)(void* arg);

  Fiber() = default;
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares fn(arg) to run on this fiber (not started yet). False if no stack could be
  // mapped. Only when not started or finished.
  bool prepare(Fn fn, void* arg);
  // Runs the fiber on the calling thread until it yields or returns.
  void resume();
  bool finished() const { return finished_; }

  // From inside a fiber: back to the thread context that resumed it.
  static void yield();
  // True on a fiber's stack (its thread's current resume is one of ours).
  static bool inside();

 private:
  static void trampoline();
  void switch_in();   // caller -> fiber
  void switch_out();  // fiber -> caller (the fiber's side)

  Fn fn_ = nullptr;
  void* arg_ = nullptr;
  bool finished_ = true;
  void* stack_ = nullptr;  // the mapping, guard page first
  size_t mapped_ = 0;
  void* stack_bottom_ = nullptr;  // the usable stack's lowest address (above the guard)
#if defined(__x86_64__)
  void* sp_ = nullptr;         // the fiber's saved stack pointer while switched out
  void* caller_sp_ = nullptr;  // the resuming side's, while the fiber runs
#else
  ucontext_t context_{};
  ucontext_t caller_{};
#endif
  // The fault guard's innermost frame of the side that is switched out.
  void* fault_frame_ = nullptr;
  void* caller_fault_frame_ = nullptr;
  // Sanitizer state (unused in plain builds).
  void* fake_stack_ = nullptr;           // ASan: the fake stack of the side switched out
  const void* caller_bottom_ = nullptr;  // ASan: the resuming thread's stack
  size_t caller_size_ = 0;
  void* tsan_fiber_ = nullptr;   // TSan: this fiber
  void* tsan_caller_ = nullptr;  // TSan: the context that resumed it
};

// Stack per fiber: as a thread's default (kernels may keep tiles on the stack); only the
// pages touched are committed.
inline constexpr size_t kFiberStackBytes = 8u << 20;

}  // namespace simpler::rt
