// One iteration of a busy-wait loop: tells the CPU we are spinning, so a sibling
// hyper-thread gets the pipeline and the loop's exit is not mispredicted.
#pragma once

namespace simpler::support {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace simpler::support
