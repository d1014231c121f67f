// simpler runtime — catching synchronous faults of user code (kernels, orchestrations)
// on the engine's threads, so a NULL dereference or an abort() fails the run instead of
// ending the host process (internal).
//
// guarded_call(fn, &fault) runs fn with a recovery point on the calling thread. While fn
// runs, a SIGSEGV / SIGBUS / SIGFPE / SIGILL raised by the CPU on this thread, or a signal
// this thread raised on itself (abort(), a failed assert(): SIGABRT), jumps back into
// guarded_call, which returns false with the signal and faulting address. The jump needs
// only the callee-saved registers, sp and pc of guarded_call's frame: on x86-64 it is
// GCC's __builtin_setjmp / __builtin_longjmp (a few stores, no call: a kernel block is
// guarded every time it runs); the signal mask is put back by recovered() after the jump,
// so nothing else is saved. Under ASan / TSan, and on other architectures, sigsetjmp with
// no mask (the sanitizers intercept it to unwind their own shadow stacks).
//
// The handlers are installed once per process, on first use, chained to what was
// installed before; each guarded thread gets its own alternate signal stack (so a stack
// overflow is caught too). A signal on a thread with no active guard, or one another
// process sent (kill), goes to the previous handler, or ends the process as it would
// have without simpler (the default action). A handler installed after ours replaces it:
// then faults are not caught.
//
// Recovery skips the destructors of every frame between the fault and guarded_call, and
// whatever those frames held (a lock, a half-updated structure, malloc's arena if the
// fault was inside malloc) stays as it was: the caller must treat everything the faulting
// code could reach as corrupted — the engine poisons itself (only release() is allowed).
#pragma once

#include <signal.h>

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <string>

namespace simpler::rt {

struct FaultInfo {
  int signo = 0;
  int code = 0;           // siginfo_t::si_code
  uintptr_t address = 0;  // siginfo_t::si_addr: the faulting data address (SEGV/BUS)
};

// "SIGSEGV (invalid memory access) at address 0x0"
std::string describe_fault(const FaultInfo& fault);

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define SIMPLER_FAULT_FRAME_BUILTIN 1  // __builtin_setjmp (see the top of this file)
#else
#define SIMPLER_FAULT_FRAME_BUILTIN 0
#endif

namespace fault_guard_detail {
struct Frame {
#if SIMPLER_FAULT_FRAME_BUILTIN
  void* env[5];  // __builtin_setjmp's buffer: frame pointer, resume address, stack pointer(s)
#else
  sigjmp_buf env;
#endif
  FaultInfo info;
  sigset_t mask;  // the signal mask of the code the fault interrupted (ucontext_t::uc_sigmask)
  Frame* previous;
};
// The innermost active guard of this thread (nullptr: none). A plain pointer: read by the
// signal handler, so no TLS wrapper or constructor. constinit (here and at the
// definitions): without it every access from another file first checks for a dynamic
// initializer through the TLS wrapper (a compare and branch per access, four per call).
extern constinit thread_local Frame* t_frame;
// This thread's alternate stack is set up (and the process's handlers installed). A plain
// flag, checked inline: a guarded call runs per kernel block, the set-up once per thread.
extern constinit thread_local bool t_prepared;
// The lowest address of the fiber stack this thread runs on (fiber.h), null on the
// thread's own stack. ASan cleans only the thread's own stack when a signal handler jumps
// out: after a recovery on a fiber, the frames the jump skipped are cleaned from here.
extern constinit thread_local void* t_fiber_stack_floor;
// Installs the process's handlers (once) and this thread's alternate stack (once).
void prepare_thread_once();
inline void prepare_thread() {
  if (!t_prepared) [[unlikely]]
    prepare_thread_once();
}
// After a recovery: restores the signal mask the faulting code ran with. The jump out of
// the handler leaves the handler's mask in place (neither jump saves a mask, so a guarded
// call costs no system call): the fault's own signal, and every signal where a
// handler was installed with a full sa_mask (ThreadSanitizer installs all of them so).
// Left blocked, the next fault of that kind on this thread would end the process.
void recovered(const Frame& frame);
}  // namespace fault_guard_detail

// True if fn returned; false after a caught fault (`fault` filled). Guards nest (a kernel
// run by the orchestrator while it is inside the orchestration is attributed to the kernel).
template <typename Fn>
bool guarded_call(Fn&& fn, FaultInfo* fault) {
  using fault_guard_detail::Frame;
  using fault_guard_detail::t_frame;
  fault_guard_detail::prepare_thread();
  Frame*& top = t_frame;  // this thread's slot, computed once
  Frame frame;
  frame.previous = top;
#if SIMPLER_FAULT_FRAME_BUILTIN
  if (__builtin_setjmp(frame.env) != 0) {
#else
  if (sigsetjmp(frame.env, 0) != 0) {
#endif
    top = frame.previous;
    *fault = frame.info;
    fault_guard_detail::recovered(frame);
    return false;
  }
  top = &frame;
  // The signal handler reads the slot: the stores may not be merged across an inlined fn
  // that touches no memory of this type (a compiler barrier, no instruction).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  fn();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  top = frame.previous;
  return true;
}

}  // namespace simpler::rt
