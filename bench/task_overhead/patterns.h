/* The task patterns of the per-task overhead benchmark, shared by the simpler
 * orchestration (programs/pattern_orchestration.cpp, a C++ image that links against
 * nothing of ours) and the libgomp reference (omp_patterns.cpp), so both run exactly the
 * same graph: every task touches "slots" (one float32 element each) of one buffer.
 */
#ifndef SIMPLER_BENCH_TASK_OVERHEAD_PATTERNS_H
#define SIMPLER_BENCH_TASK_OVERHEAD_PATTERNS_H

#include <stdint.h>

typedef enum BenchPattern {
  BENCH_CHAIN = 0,    /* task i inout slot 0: each task waits for the previous one */
  BENCH_FAN_IN = 1,   /* groups of 8 producers (out: fresh slots) + 1 consumer reading all 8 */
  BENCH_CHAINS8 = 2,  /* 8 independent chains: task i inout slot i % 8 */
  BENCH_DISTINCT = 3, /* task i out slot i: no dependencies at all (the "0 deps" case) */
  BENCH_DEPS1 = 4,    /* task i out slot i+3, in slot i+2 (written by task i-1) */
  BENCH_DEPS2 = 5,    /* ... in slots i+2, i+1 */
  BENCH_DEPS3 = 6,    /* ... in slots i+2, i+1, i (the first tasks read never-written slots) */
  BENCH_DEPSK = 7,    /* task i out slot i+8, in slots i+7 .. i+8-k, k = 0..8 (scaling table) */
  BENCH_PATTERN_COUNT = 8
} BenchPattern;

#define BENCH_FAN_IN_WIDTH 8
#define BENCH_CHAINS 8
#define BENCH_DEPS_BASE 3 /* first slot a DEPSk task writes */
/* Tasks per scope in a scoped run: a task in a scope never takes the engine's immediate
 * path (it runs at its submit when nothing is in flight), so every task of a scoped run
 * goes through the window and dependency inference. Under the window (1,024 tasks): a
 * scope larger than the window cannot complete. */
#define BENCH_SCOPE_BATCH 256

/* Func ids of the empty kernel, one per task shape (the runtime checks each task's
 * arguments against its kernel's signature): */
#define BENCH_KERNEL_INOUT 0   /* [INOUT]            chain, 8 chains */
#define BENCH_KERNEL_OUT 1     /* [OUT]              distinct, fan-in producers */
#define BENCH_KERNEL_OUT_IN1 2 /* [OUT, IN]          1 dep */
#define BENCH_KERNEL_OUT_IN2 3 /* [OUT, IN, IN]      2 deps */
#define BENCH_KERNEL_OUT_IN3 4 /* [OUT, IN, IN, IN]  3 deps */
#define BENCH_KERNEL_IN8_OUT 5 /* [IN x 8, OUT]      fan-in consumer */
#define BENCH_KERNEL_OUT_INK 6 /* + k: [OUT, IN x k], k = 0..8: DEPSK */
#define BENCH_KERNEL_COUNT 15
#define BENCH_MAX_DEPS 8

/* Slots the pattern needs for `tasks` tasks (the buffer holds that many float32). */
static inline uint64_t bench_pattern_slots(int pattern, uint64_t tasks) {
  switch (pattern) {
    case BENCH_CHAIN:
      return 1;
    case BENCH_CHAINS8:
      return BENCH_CHAINS;
    default:
      return tasks + BENCH_FAN_IN_WIDTH + 1;
  }
}

/* Tasks actually run for a requested count (fan-in runs whole groups of 9). */
static inline uint64_t bench_pattern_tasks(int pattern, uint64_t requested) {
  const uint64_t group = BENCH_FAN_IN_WIDTH + 1;
  return pattern == BENCH_FAN_IN ? requested / group * group : requested;
}

/* Dependencies of tasks of the DEPSk patterns (0 for DISTINCT). */
static inline int bench_pattern_deps(int pattern) {
  return pattern >= BENCH_DEPS1 && pattern <= BENCH_DEPS3 ? pattern - BENCH_DEPS1 + 1 : 0;
}

#endif
