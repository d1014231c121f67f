// Process-wide fault handlers (chained) and per-thread alternate signal stacks.
#include "fault_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace simpler::rt {
namespace fault_guard_detail {

constinit thread_local Frame* t_frame = nullptr;
constinit thread_local bool t_prepared = false;
constinit thread_local void* t_fiber_stack_floor = nullptr;

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// What was installed before us, per signal number (written once, before our handler is).
struct sigaction g_previous[NSIG];

// A signal this guard may recover from: raised by the CPU for the faulting instruction
// (si_code > 0), or raised by this very thread on itself (abort(), raise(): SI_TKILL from
// our own pid). A signal sent by another process is never taken for a kernel's fault.
bool is_own_fault(const siginfo_t* info) {
  if (info->si_code > 0) return true;
  return info->si_code == SI_TKILL && info->si_pid == getpid();
}

void chain(int signo, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous[signo];
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(signo, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signo);
    return;
  }
  if (previous.sa_handler == SIG_IGN && info->si_code <= 0) return;  // a sent, ignored signal
  // The default action (a CPU fault cannot be ignored): restore it and let the signal
  // recur, so the process ends exactly as it would have without us (core dump included).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, nullptr);
  if (info->si_code <= 0) raise(signo);  // a raised signal does not recur by itself
}

void on_signal(int signo, siginfo_t* info, void* context) {
  Frame* frame = t_frame;
  if (frame != nullptr && is_own_fault(info)) {
    frame->info.signo = signo;
    frame->info.code = info->si_code;
    frame->info.address = reinterpret_cast<uintptr_t>(info->si_addr);
    frame->mask = static_cast<const ucontext_t*>(context)->uc_sigmask;
#if SIMPLER_FAULT_FRAME_BUILTIN
    __builtin_longjmp(frame->env, 1);  // leaves the alternate stack with sp
#else
    siglongjmp(frame->env, 1);
#endif
  }
  chain(signo, info, context);
}

void install_handlers() {
  for (int signo : kSignals) {
    struct sigaction ours {};
    ours.sa_sigaction = &on_signal;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    sigaction(signo, nullptr, &g_previous[signo]);
    sigaction(signo, &ours, nullptr);
  }
}

// This thread's alternate signal stack (a stack overflow leaves no room on the thread's
// own stack for the handler). Kept when the thread already had one; ours is disabled and
// unmapped when the thread exits.
class AltStack {
 public:
  AltStack() {
    stack_t current{};
    if (sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return;
    const size_t bytes = kBytes;
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return;  // faults then run the handler on the thread's stack
    stack_t mine{};
    mine.ss_sp = memory;
    mine.ss_size = bytes;
    if (sigaltstack(&mine, nullptr) != 0) {
      munmap(memory, bytes);
      return;
    }
    memory_ = memory;
  }
  ~AltStack() {
    if (memory_ == nullptr) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    munmap(memory_, kBytes);
  }
  AltStack(const AltStack&) = delete;
  AltStack& operator=(const AltStack&) = delete;

 private:
  static constexpr size_t kBytes = 64 * 1024;
  void* memory_ = nullptr;
};

}  // namespace

void prepare_thread_once() {
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
  thread_local AltStack stack;
  t_prepared = true;
}

void recovered(const Frame& frame) {
  pthread_sigmask(SIG_SETMASK, &frame.mask, nullptr);
#if defined(__SANITIZE_ADDRESS__)
  // Below this frame lie only the skipped frames of the faulting code: their redzones
  // would poison the next calls (ASan's jump cleanup covered the thread's own stack).
  if (t_fiber_stack_floor != nullptr) {
    char* floor = static_cast<char*>(t_fiber_stack_floor);
    char* here = static_cast<char*>(__builtin_frame_address(0));
    if (here > floor) __asan_unpoison_memory_region(floor, static_cast<size_t>(here - floor));
  }
#endif
}

}  // namespace fault_guard_detail

std::string describe_fault(const FaultInfo& fault) {
  const char* name = "signal";
  const char* what = "";
  switch (fault.signo) {
    case SIGSEGV:
      name = "SIGSEGV";
      what = "invalid memory access";
      break;
    case SIGBUS:
      name = "SIGBUS";
      what = "bus error";
      break;
    case SIGFPE:
      name = "SIGFPE";
      what = "arithmetic fault, e.g. an integer division by zero";
      break;
    case SIGILL:
      name = "SIGILL";
      what = "illegal instruction";
      break;
    case SIGABRT:
      name = "SIGABRT";
      what = "abort() or a failed assert()";
      break;
    default:
      break;
  }
  std::string text = std::string(name) + " (" + what + ")";
  if (fault.signo == SIGSEGV || fault.signo == SIGBUS) {
    char address[32];
    std::snprintf(address, sizeof address, "0x%" PRIxPTR, fault.address);
    text += std::string(" at address ") + address;
  }
  return text;
}

}  // namespace simpler::rt
