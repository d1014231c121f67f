// The benchmark patterns (patterns.h) as OpenMP tasks with depend clauses (GCC libgomp):
// one thread of a 2-thread team creates the tasks inside `single`, both execute them.
#pragma once

#include <cstdint>
#include <vector>

namespace simpler::bench {

struct OmpTimes {
  std::vector<double> full;   // ns: create `tasks` tasks, then taskwait
  std::vector<double> empty;  // ns: taskwait alone (the fixed cost of one round)
};

// Inside one parallel region of `threads` threads, `reps` times: runs `tasks` empty tasks
// of `pattern` (bench_pattern_tasks() already applied) over `slots`
// (bench_pattern_slots() floats) and waits for them, then times an empty round.
OmpTimes run_omp_pattern(int pattern, uint64_t tasks, float* slots, int threads, int reps);

}  // namespace simpler::bench
