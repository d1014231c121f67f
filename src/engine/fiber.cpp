// Fibers on ucontext, with the fault guard's chain and the sanitizers' annotations.
#include "fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include "fault_guard.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SIMPLER_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define SIMPLER_FIBER_TSAN 1
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
  if (getcontext(&context_) != 0) return false;
  context_.uc_stack.ss_sp = static_cast<char*>(stack_) + guard;
  context_.uc_stack.ss_size = kFiberStackBytes;
  context_.uc_link = nullptr;  // the trampoline switches back itself
  makecontext(&context_, &Fiber::trampoline, 0);
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
  fault_guard_detail::t_fiber_stack_floor = context_.uc_stack.ss_sp;
#if SIMPLER_FIBER_ASAN
  void* caller_fake = nullptr;
  __sanitizer_start_switch_fiber(&caller_fake, context_.uc_stack.ss_sp, kFiberStackBytes);
#endif
#if SIMPLER_FIBER_TSAN
  tsan_caller_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(tsan_fiber_, 0);
#endif
  swapcontext(&caller_, &context_);
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
  swapcontext(&context_, &caller_);
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
