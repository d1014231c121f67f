// Kernel thread_tally: c[0] += 1, and c[1] += 1 when the block runs on a thread other than
// `tid` (a Linux thread id). Chained through INOUT c, so the plain increments never race.
// Signature [INOUT c (int32, >= 2 elements), SCALAR tid (i64)].
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* c = simpler_tensor_arg(args, 0);
  int32_t* counts = test_kernels::base<int32_t>(*c) + c->start_offset;
  counts[0] += 1;
  // Cached: a system call per block (microseconds on a small VM) would make the kernel
  // long enough to be worth a second thread, which is not what the tests ask about.
  static thread_local const auto tid = static_cast<int64_t>(syscall(SYS_gettid));
  if (tid != simpler_scalar_i64(args, 1)) counts[1] += 1;
}
