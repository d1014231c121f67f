// Work for the mixed-stream kernels of scene_bench: `us` microseconds of the calling
// thread's CPU time (a stand-in for a kernel's compute that, unlike a sleep, occupies a
// hardware thread as real kernel work does on the simulated chip, whatever the load).
#pragma once

#include <stdint.h>
#include <time.h>

static inline int64_t busy_thread_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void busy_for_us(int64_t us) {
  const int64_t end = busy_thread_ns() + us * 1000;
  while (busy_thread_ns() < end) {
  }
}
