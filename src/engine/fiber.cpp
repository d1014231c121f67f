// Fibers (a register switch on x86-64, ucontext elsewhere), with the fault guard's chain
// and the sanitizers' annotations.
#include "fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "fault_guard.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SIMPLER_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define SIMPLER_FIBER_TSAN 1
#endif

#if defined(__x86_64__)
// Saves rbp, rbx, r12-r15 and the SSE/x87 control words on the current stack, stores the
// stack pointer in *save_sp, switches to next_sp and restores the same from there (a new
// fiber's stack is laid out as if it had switched out: Fiber::prepare). System V: every
// other register is caller-saved, so the call itself preserves nothing more.
extern "C" void simpler_fiber_switch(void** save_sp, void* next_sp);
asm(R"(
  .text
  .globl simpler_fiber_switch
  .hidden simpler_fiber_switch
  .type simpler_fiber_switch,@function
  .p2align 4
simpler_fiber_switch:
  endbr64
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size simpler_fiber_switch, .-simpler_fiber_switch
)");
#endif

namespace simpler::rt {
namespace {

// The fiber this thread runs now (null: the thread's own stack).
thread_local Fiber* t_current = nullptr;

using fault_guard_detail::Frame;
using fault_guard_detail::t_frame;

size_t page_bytes() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

Fiber::~Fiber() {
  if (stack_ != nullptr) munmap(stack_, mapped_);
#if SIMPLER_FIBER_TSAN
  if (tsan_fiber_ != nullptr) __tsan_destroy_fiber(tsan_fiber_);
#endif
}

bool Fiber::prepare(Fn fn, void* arg) {
  const size_t guard = page_bytes();
  if (stack_ == nullptr) {
    void* memory = mmap(nullptr, kFiberStackBytes + guard, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED) return false;
    // The lowest page faults: an overflow is a caught SIGSEGV, not another fiber's stack.
    if (mprotect(memory, guard, PROT_NONE) != 0) {
      munmap(memory, kFiberStackBytes + guard);
      return false;
    }
    stack_ = memory;
    mapped_ = kFiberStackBytes + guard;
#if SIMPLER_FIBER_TSAN
    tsan_fiber_ = __tsan_create_fiber(0);
#endif
  }
  stack_bottom_ = static_cast<char*>(stack_) + guard;
#if defined(__x86_64__)
  // As simpler_fiber_switch leaves a stack: control words, six registers, then the return
  // address, the trampoline, entered with the stack as after a call (rsp + 8 aligned to
  // 16), above it a null return address (the trampoline never returns).
  auto* top = reinterpret_cast<uint64_t*>(
      (reinterpret_cast<uintptr_t>(stack_bottom_) + kFiberStackBytes) & ~uintptr_t{15});
  uint64_t* sp = top - 9;
  uint32_t mxcsr = 0;
  uint16_t fpu_cw = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpu_cw));
  sp[0] = mxcsr | static_cast<uint64_t>(fpu_cw) << 32;  // the thread's modes, as ucontext
  for (int i = 1; i <= 6; ++i) sp[i] = 0;               // r15 .. rbp
  sp[7] = reinterpret_cast<uint64_t>(&Fiber::trampoline);
  sp[8] = 0;
  sp_ = sp;
#else
  if (getcontext(&context_) != 0) return false;
  context_.uc_stack.ss_sp = stack_bottom_;
  context_.uc_stack.ss_size = kFiberStackBytes;
  context_.uc_link = nullptr;  // the trampoline switches back itself
  makecontext(&context_, &Fiber::trampoline, 0);
#endif
  fn_ = fn;
  arg_ = arg;
  finished_ = false;
  fault_frame_ = nullptr;  // a new fiber is inside no guard
  fake_stack_ = nullptr;
  return true;
}

void Fiber::resume() {
  Fiber* outer = t_current;
  t_current = this;
  caller_fault_frame_ = t_frame;
  t_frame = static_cast<Frame*>(fault_frame_);
  void* const caller_floor = fault_guard_detail::t_fiber_stack_floor;
  fault_guard_detail::t_fiber_stack_floor = stack_bottom_;
#if SIMPLER_FIBER_ASAN
  void* caller_fake = nullptr;
  __sanitizer_start_switch_fiber(&caller_fake, stack_bottom_, kFiberStackBytes);
#endif
#if SIMPLER_FIBER_TSAN
  tsan_caller_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(tsan_fiber_, 0);
#endif
#if defined(__x86_64__)
  simpler_fiber_switch(&caller_sp_, sp_);
#else
  swapcontext(&caller_, &context_);
#endif
#if SIMPLER_FIBER_ASAN
  __sanitizer_finish_switch_fiber(caller_fake, nullptr, nullptr);
#endif
  t_frame = static_cast<Frame*>(caller_fault_frame_);
  fault_guard_detail::t_fiber_stack_floor = caller_floor;
  t_current = outer;
}

void Fiber::switch_out() {
  fault_frame_ = t_frame;
#if SIMPLER_FIBER_ASAN
  // A finished fiber leaves for good: its fake stack goes (null save).
  __sanitizer_start_switch_fiber(finished_ ? nullptr : &fake_stack_, caller_bottom_, caller_size_);
#endif
#if SIMPLER_FIBER_TSAN
  __tsan_switch_to_fiber(tsan_caller_, 0);
#endif
#if defined(__x86_64__)
  simpler_fiber_switch(&sp_, caller_sp_);
#else
  swapcontext(&context_, &caller_);
#endif
  // Resumed (never after finishing: prepare() makes a new context).
#if SIMPLER_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_, &caller_bottom_, &caller_size_);
#endif
}

void Fiber::trampoline() {
  Fiber* self = t_current;
#if SIMPLER_FIBER_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &self->caller_bottom_, &self->caller_size_);
#endif
  self->fn_(self->arg_);
  self->finished_ = true;
  self->switch_out();
}

void Fiber::yield() { t_current->switch_out(); }

bool Fiber::inside() { return t_current != nullptr; }

}  // namespace simpler::rt
