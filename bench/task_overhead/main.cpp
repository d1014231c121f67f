// Per-task overhead of simpler's runtime with empty kernels, side by side with OpenMP
// tasks + depend (GCC libgomp, 2 threads) running the same task graphs in the same
// process. Not a test: prints figures and ratios.
//
// ns/task = (median T(tasks) - median T(0)) / tasks, where T is the wall time of one
// round: simpler, one Engine::execute of an orchestration submitting the tasks (T(0): an
// orchestration submitting none, i.e. waking the engine's threads and the completion
// handshake); libgomp, inside a parallel region (its start is not timed), one thread
// creating the tasks then `taskwait` (T(0): a bare taskwait). Repetitions alternate
// between the two runtimes so the machine's background load hits both alike.
//
// Every slot (the unit a dependency is tracked on) is its own buffer, as every libgomp
// depend object is its own address. The last column repeats simpler's run with the
// slots as views (slices) of one buffer, which the tensor map tracks by overlap.
//
// Usage: task_overhead_bench [--tasks N] [--reps R] [--quick] [--pattern KEY]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "omp_patterns.h"
#include "patterns.h"
#include "simpler_patterns.h"

namespace {

using simpler::bench::run_omp_pattern;
using simpler::bench::SimplerPatternRunner;

constexpr int kOmpThreads = 2;

struct Options {
  uint64_t tasks = 20000;
  int reps = 9;
  std::string only;  // --pattern KEY: run one row (for profiling)
};

struct Row {
  const char* key;
  const char* name;
  int pattern;
};
constexpr Row kRows[] = {
    {"chain", "chain", BENCH_CHAIN},
    {"fan-in", "fan-in (8 -> 1)", BENCH_FAN_IN},
    {"chains8", "8 independent chains", BENCH_CHAINS8},
    {"distinct", "distinct outputs (0 deps)", BENCH_DISTINCT},
    {"deps1", "1 dep per task", BENCH_DEPS1},
    {"deps2", "2 deps per task", BENCH_DEPS2},
    {"deps3", "3 deps per task", BENCH_DEPS3},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// libgomp's idle team threads spin for a while before sleeping; let them settle so they
// do not steal a core from the next simpler run (and vice versa for simpler's parking).
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(5)); }

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.tasks = 2000;
      o.reps = 3;
    } else if (a == "--tasks" && i + 1 < argc) {
      o.tasks = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--reps" && i + 1 < argc) {
      o.reps = std::atoi(argv[++i]);
    } else if (a == "--pattern" && i + 1 < argc) {
      o.only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--tasks N] [--reps R] [--quick] [--pattern chain|fan-in|chains8|"
                   "distinct|deps1|deps2|deps3]\n",
                   argv[0]);
      std::exit(2);
    }
  }
  if (o.tasks < 100 || o.reps < 1) {
    std::fprintf(stderr, "task_overhead_bench: need --tasks >= 100 and --reps >= 1\n");
    std::exit(2);
  }
  return o;
}

struct Result {
  double simpler_ns = 0;        // per task, every slot its own buffer
  double simpler_views_ns = 0;  // per task, slots are views of one buffer
  double omp_ns = 0;
};

Result measure(SimplerPatternRunner& runner, std::vector<float>& omp_slots, int pattern,
               const Options& o) {
  const uint64_t tasks = bench_pattern_tasks(pattern, o.tasks);
  std::vector<double> s_full, s_empty, v_full, g_full, g_empty;
  // Warm up: first touch of rings, slot pages and libgomp's task pool.
  runner.run(pattern, tasks);
  run_omp_pattern(pattern, tasks, omp_slots.data(), kOmpThreads, 1);
  for (int r = 0; r < o.reps; ++r) {  // interleaved, so load changes hit both runtimes
    settle();
    s_full.push_back(runner.run(pattern, tasks));
    s_empty.push_back(runner.run(pattern, 0));
    v_full.push_back(runner.run(pattern, tasks, /*views=*/true));
    settle();
    const simpler::bench::OmpTimes g =
        run_omp_pattern(pattern, tasks, omp_slots.data(), kOmpThreads, 1);
    g_full.push_back(g.full[0]);
    g_empty.push_back(g.empty[0]);
  }
  Result res;
  res.simpler_ns = (median(s_full) - median(s_empty)) / static_cast<double>(tasks);
  res.simpler_views_ns = (median(v_full) - median(s_empty)) / static_cast<double>(tasks);
  res.omp_ns = (median(g_full) - median(g_empty)) / static_cast<double>(tasks);
  return res;
}

// A difference of medians can come out <= 0 when the machine is very busy.
const char* verdict(double simpler_ns, double omp_ns, double ratio, double target) {
  if (simpler_ns <= 0 || omp_ns <= 0) return "too noisy (rerun on a quieter machine)";
  return ratio <= target ? "met" : "MISSED";
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  omp_set_num_threads(kOmpThreads);
  const uint64_t max_slots = o.tasks + BENCH_FAN_IN_WIDTH + 1;
  try {
    SimplerPatternRunner runner(SIMPLER_BENCH_ORCHESTRATION_PATH, SIMPLER_BENCH_KERNEL_PATH,
                                max_slots);
    std::vector<float> omp_slots(max_slots, 0.0f);
    std::printf(
        "task_overhead_bench: %llu tasks per run, median of %d runs, %u hardware "
        "threads; libgomp with %d threads\n",
        static_cast<unsigned long long>(o.tasks), o.reps, std::thread::hardware_concurrency(),
        kOmpThreads);
    std::printf("%-28s %16s %16s %12s  %-16s %s\n", "pattern", "simpler ns/task", "libgomp ns/task",
                "ratio", "target <= 0.60x", "simpler, slots as views");
    Result results[BENCH_PATTERN_COUNT];
    for (const Row& row : kRows) {
      if (!o.only.empty() && o.only != row.key) continue;
      const Result r = measure(runner, omp_slots, row.pattern, o);
      results[row.pattern] = r;
      const double ratio = r.simpler_ns / r.omp_ns;
      std::printf("%-28s %16.1f %16.1f %11.2fx  %-16s %.1f\n", row.name, r.simpler_ns, r.omp_ns,
                  ratio, verdict(r.simpler_ns, r.omp_ns, ratio, 0.6), r.simpler_views_ns);
      std::fflush(stdout);
    }
    if (!o.only.empty()) return 0;
    const double dep_ratio = results[BENCH_DEPS3].simpler_ns / results[BENCH_DISTINCT].simpler_ns;
    const double omp_dep_ratio = results[BENCH_DEPS3].omp_ns / results[BENCH_DISTINCT].omp_ns;
    std::printf("3-dep / 0-dep cost: simpler %.2fx (target <= 2.00x: %s), libgomp %.2fx\n",
                dep_ratio,
                verdict(results[BENCH_DEPS3].simpler_ns, results[BENCH_DISTINCT].simpler_ns,
                        dep_ratio, 2.0),
                omp_dep_ratio);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "task_overhead_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
