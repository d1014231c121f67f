// Kernel crash: misbehaves as `how` says, for the fault-guard and watchdog tests.
// Signature [INOUT x, SCALAR how (i64)]: 0 NULL dereference (SIGSEGV), 1 abort() (SIGABRT),
// 2 integer division by zero (SIGFPE), 3 never returns (sleeps forever), anything else
// x[0] += 1.
#include <chrono>
#include <cstdlib>
#include <thread>

#include "kernel_util.h"

namespace {
// volatile: the compiler must not prove the faults away.
volatile int g_zero = 0;
volatile int g_seven = 7;  // 1 / x compiles to a compare, 7 / x to a division
int* volatile g_null = nullptr;

// The fault is the point: UBSan (in the ASan build) must not stop the process before the
// SIGSEGV reaches the fault guard under test.
__attribute__((no_sanitize("undefined"))) void store_through_null() { *g_null = 1; }
// Likewise for the SIGFPE (UBSan would report the division and end the process).
__attribute__((no_sanitize("undefined"))) int divide(int a, int b) { return a / b; }
}  // namespace

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  switch (simpler_scalar_i64(args, 1)) {
    case 0:
      store_through_null();
      break;
    case 1:
      std::abort();
    case 2:
      test_kernels::base<float>(*x)[x->start_offset] += static_cast<float>(divide(g_seven, g_zero));
      break;
    case 3:
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    default:
      test_kernels::base<float>(*x)[x->start_offset] += 1.0f;
  }
}
