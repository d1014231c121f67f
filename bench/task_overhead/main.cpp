// Per-task overhead of simpler's runtime with empty kernels, side by side with the
// runtimes a user would pick instead, all in the same process run:
//   - OpenMP tasks + depend (GCC libgomp, 2 threads);
//   - oneTBB: a flow graph of continue_nodes with dependencies inferred from the same
//     slots through a std::unordered_map, and tbb::task_group for independent tasks
//     (tbb_patterns.h; 2 threads; left out when the build found no TBB);
//   - the serial floor: the same tasks inline on one thread through simpler's own
//     dependency inference, no hand-off (serial_floor.h).
// Not a test: prints figures and ratios.
//
// ns/task = (median T(tasks) - median T(0)) / tasks, where T is the wall time of one
// round: simpler, one Engine::execute of an orchestration submitting the tasks (T(0): an
// orchestration submitting none); libgomp, inside a parallel region (its start is not
// timed), one thread creating the tasks then `taskwait` (T(0): a bare taskwait); TBB, one
// graph built, run and destroyed (T(0): an empty graph); task_group, run + wait (T(0): an
// empty group). Repetitions alternate between the runtimes so the machine's background
// load hits all alike.
//
// Every slot (the unit a dependency is tracked on) is its own buffer, as every libgomp
// depend object is its own address. The "views" column repeats simpler's run with the
// slots as views (slices) of one buffer, which the tensor map tracks by overlap.
//
// With empty kernels every task of a plain run is submitted while nothing is in flight,
// so the engine runs it at its submit (the immediate run) and the "simpler" column measures
// neither dependency inference nor the window. The "scoped" rows repeat simpler's run with
// every 256 tasks in a scope (patterns.h), which keeps each task off the immediate path:
// inference, window slot, edges, release and reclaim, as in a program whose kernels
// outlast their submit. (A gate task that waits for the orchestration would not do: the
// orchestrating thread runs ready work itself, work-first, and would wait for itself.)
// Peers and floor as in the first table.
//
// --scaling prints per-task cost against the number of tasks (1k..1M, 1 dep per task)
// and against dependencies per task (0..8, immediate and scoped) instead.
//
// Usage: task_overhead_bench [--tasks N] [--reps R] [--quick] [--pattern KEY] [--scaling]
//                            [--simpler-only [--variant immediate|scoped]]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_defaults.h"
#include "omp_patterns.h"
#include "patterns.h"
#include "serial_floor.h"
#include "simpler_patterns.h"
#if SIMPLER_BENCH_HAVE_TBB
#include "tbb_patterns.h"
#endif

namespace {

using simpler::bench::run_omp_pattern;
using simpler::bench::SerialFloor;
using simpler::bench::SimplerPatternRunner;

constexpr int kPeerThreads = 2;

struct Options {
  uint64_t tasks = 20000;
  int reps = 9;
  std::string only;  // --pattern KEY: run one row (for profiling)
  bool scaling = false;
  bool simpler_only = false;   // --simpler-only: no peers, no floor (for profiling)
  int variant = 2;             // with --simpler-only, --variant: 0 immediate, 1 scoped, 2 both
  uint64_t largest = 1000000;  // --scaling: the largest run (--quick: 100,000)
};

struct Row {
  const char* key;
  const char* name;
  int pattern;
  double target;  // simpler / best peer
};
constexpr Row kRows[] = {
    {"chain", "chain", BENCH_CHAIN, 0.6},
    {"fan-in", "fan-in (8 -> 1)", BENCH_FAN_IN, 1.0},
    {"chains8", "8 independent chains", BENCH_CHAINS8, 1.0},
    {"distinct", "distinct outputs (0 deps)", BENCH_DISTINCT, 1.0},
    {"deps1", "1 dep per task", BENCH_DEPS1, 0.6},
    {"deps2", "2 deps per task", BENCH_DEPS2, 0.6},
    {"deps3", "3 deps per task", BENCH_DEPS3, 0.6},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double per_task(const std::vector<double>& full, const std::vector<double>& empty, uint64_t n) {
  return (median(full) - median(empty)) / static_cast<double>(n);
}

// Idle team threads of libgomp and TBB spin for a while before sleeping; let them settle
// so they do not steal a core from the next runtime's round (and vice versa).
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(5)); }

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.tasks = 2000;
      o.reps = 5;
      o.largest = 100000;
    } else if (a == "--tasks" && i + 1 < argc) {
      o.tasks = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--reps" && i + 1 < argc) {
      o.reps = std::atoi(argv[++i]);
    } else if (a == "--pattern" && i + 1 < argc) {
      o.only = argv[++i];
    } else if (a == "--scaling") {
      o.scaling = true;
    } else if (a == "--simpler-only") {
      o.simpler_only = true;
    } else if (a == "--variant" && i + 1 < argc) {  // one variant, for callgrind counts
      const std::string v = argv[++i];
      o.variant = v == "immediate" ? 0 : v == "scoped" ? 1 : -1;
      if (o.variant < 0) {
        std::fprintf(stderr, "task_overhead_bench: --variant takes immediate or scoped\n");
        std::exit(2);
      }
    } else {
      std::fprintf(
          stderr,
          "usage: %s [--tasks N] [--reps R] [--quick] [--scaling] [--simpler-only [--variant "
          "immediate|scoped]] [--pattern "
          "chain|fan-in|chains8|distinct|deps1|deps2|deps3]\n",
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

struct Peers {
  std::vector<float> slots;
#if SIMPLER_BENCH_HAVE_TBB
  simpler::bench::TbbRunner tbb{kPeerThreads};
#endif
};

struct Result {
  double simpler_ns = 0;        // per task, every slot its own buffer
  double simpler_views_ns = 0;  // per task, slots are views of one buffer
  double scoped_ns = 0;         // per task, batches in scopes (the queued path)
  double floor_ns = 0;          // serial floor
  double omp_ns = 0;
  double tbb_ns = -1;    // flow graph; < 0: not built with TBB
  double group_ns = -1;  // task_group (distinct outputs only)
};

Result measure(SimplerPatternRunner& runner, SerialFloor& floor, Peers& peers, int pattern,
               const Options& o) {
  const uint64_t tasks = bench_pattern_tasks(pattern, o.tasks);
  float* slots = peers.slots.data();
  std::vector<double> s_full, s_empty, v_full, x_full, f_full, g_full, g_empty, t_full, t_empty,
      q_full, q_empty;
  // Warm up: first touch of rings, slot pages, task pools.
  const bool plain = !o.simpler_only || o.variant != 1;
  const bool scoped = !o.simpler_only || o.variant != 0;
  if (plain) runner.run(pattern, tasks);
  if (scoped) runner.run(pattern, tasks, false, 0, /*scoped=*/true);
  if (o.simpler_only) {
    for (int r = 0; r < o.reps; ++r) {
      if (plain) s_full.push_back(runner.run(pattern, tasks));
      s_empty.push_back(runner.run(pattern, 0));
      if (scoped) x_full.push_back(runner.run(pattern, tasks, false, 0, /*scoped=*/true));
    }
    Result res;
    if (plain) res.simpler_ns = per_task(s_full, s_empty, tasks);
    if (scoped) res.scoped_ns = per_task(x_full, s_empty, tasks);
    return res;
  }
  floor.run(pattern, tasks);
  run_omp_pattern(pattern, tasks, slots, kPeerThreads, 1);
#if SIMPLER_BENCH_HAVE_TBB
  peers.tbb.flow_graph(pattern, tasks, slots);
#endif
  for (int r = 0; r < o.reps; ++r) {  // interleaved, so load changes hit every runtime
    settle();
    s_full.push_back(runner.run(pattern, tasks));
    s_empty.push_back(runner.run(pattern, 0));
    v_full.push_back(runner.run(pattern, tasks, /*views=*/true));
    x_full.push_back(runner.run(pattern, tasks, false, 0, /*scoped=*/true));
    f_full.push_back(floor.run(pattern, tasks));
    settle();
    const simpler::bench::OmpTimes g = run_omp_pattern(pattern, tasks, slots, kPeerThreads, 1);
    g_full.push_back(g.full[0]);
    g_empty.push_back(g.empty[0]);
#if SIMPLER_BENCH_HAVE_TBB
    settle();
    t_full.push_back(peers.tbb.flow_graph(pattern, tasks, slots));
    t_empty.push_back(peers.tbb.flow_graph(pattern, 0, slots));
    if (pattern == BENCH_DISTINCT) {
      q_full.push_back(peers.tbb.task_group(tasks, slots));
      q_empty.push_back(peers.tbb.task_group(0, slots));
    }
#endif
  }
  Result res;
  res.simpler_ns = per_task(s_full, s_empty, tasks);
  res.simpler_views_ns = per_task(v_full, s_empty, tasks);
  res.scoped_ns = per_task(x_full, s_empty, tasks);
  res.floor_ns = median(f_full) / static_cast<double>(tasks);
  res.omp_ns = per_task(g_full, g_empty, tasks);
  if (!t_full.empty()) res.tbb_ns = per_task(t_full, t_empty, tasks);
  if (!q_full.empty()) res.group_ns = per_task(q_full, q_empty, tasks);
  return res;
}

// A difference of medians can come out <= 0 when the machine is very busy.
const char* verdict(double a, double b, double target) {
  if (a <= 0 || b <= 0) return "too noisy";
  return a / b <= target ? "met" : "MISSED";
}

// The best peer of a row: the flow graph (when built with TBB), else libgomp.
double best_peer(const Result& r) { return r.tbb_ns > 0 ? std::min(r.tbb_ns, r.omp_ns) : r.omp_ns; }

// The second table: the same patterns on the queued path (batches in scopes).
void print_scoped(const Result* results, const Options& o) {
  std::printf(
      "\nthe queued path: every %d tasks in a scope (no task runs at its submit; "
      "inference, window, edges)\n",
      BENCH_SCOPE_BATCH);
  std::printf("%-26s %9s %9s %9s %9s %8s %-14s %8s %9s\n", "pattern (ns/task)", "scoped",
              "immediate", "floor", "best peer", "sc/best", "target", "sc/floor", "sc/immed");
  for (const Row& row : kRows) {
    if (!o.only.empty() && o.only != row.key) continue;
    const Result& r = results[row.pattern];
    const double best = best_peer(r);
    char target[32];
    std::snprintf(target, sizeof target, "<=%.1fx %s", row.target,
                  verdict(r.scoped_ns, best, row.target));
    std::printf("%-26s %9.1f %9.1f %9.1f %9.1f %7.2fx %-14s %7.2fx %8.2fx\n", row.name, r.scoped_ns,
                r.simpler_ns, r.floor_ns, best, r.scoped_ns / best, target,
                r.scoped_ns / r.floor_ns, r.scoped_ns / r.simpler_ns);
  }
  const Result& d = results[BENCH_DISTINCT];
  if (d.group_ns > 0 && d.scoped_ns != 0) {
    std::printf("scoped distinct outputs vs tbb::task_group: %.2fx (target <= 2x: %s)\n",
                d.scoped_ns / d.group_ns, verdict(d.scoped_ns, d.group_ns, 2.0));
  }
  const Result& c = results[BENCH_CHAIN];
  if (c.floor_ns > 0 && c.scoped_ns != 0) {
    std::printf("scoped chain vs the serial floor: %.2fx (target <= 1.5x: %s)\n",
                c.scoped_ns / c.floor_ns, verdict(c.scoped_ns, c.floor_ns, 1.5));
  }
  std::fflush(stdout);
}

int run_table(SimplerPatternRunner& runner, SerialFloor& floor, Peers& peers, const Options& o) {
  std::printf("%-26s %9s %9s %9s %9s %9s %8s %-14s %8s %-12s\n", "pattern (ns/task)", "simpler",
              "views", "floor", "tbb-flow", "libgomp", "s/best", "target", "s/floor",
              "views/s<=1.2");
  Result results[BENCH_PATTERN_COUNT];
  for (const Row& row : kRows) {
    if (!o.only.empty() && o.only != row.key) continue;
    const Result r = measure(runner, floor, peers, row.pattern, o);
    results[row.pattern] = r;
    if (o.simpler_only) {
      std::printf("%-26s %9.1f   scoped %9.1f\n", row.name, r.simpler_ns,
                  r.scoped_ns);  // 0: not run
      continue;
    }
    const double best = best_peer(r);
    char target[32];
    std::snprintf(target, sizeof target, "<=%.1fx %s", row.target,
                  verdict(r.simpler_ns, best, row.target));
    std::printf("%-26s %9.1f %9.1f %9.1f %9.1f %9.1f %7.2fx %-14s %7.2fx %.2fx %s\n", row.name,
                r.simpler_ns, r.simpler_views_ns, r.floor_ns, r.tbb_ns, r.omp_ns,
                r.simpler_ns / best, target, r.simpler_ns / r.floor_ns,
                r.simpler_views_ns / r.simpler_ns, verdict(r.simpler_views_ns, r.simpler_ns, 1.2));
    std::fflush(stdout);
  }
  const Result& d = results[BENCH_DISTINCT];
  if (d.group_ns > 0 && d.simpler_ns != 0) {
    std::printf("distinct outputs vs tbb::task_group (%.1f ns/task): %.2fx (target <= 2x: %s)\n",
                d.group_ns, d.simpler_ns / d.group_ns, verdict(d.simpler_ns, d.group_ns, 2.0));
  }
  const Result& c = results[BENCH_CHAIN];
  if (c.floor_ns > 0 && c.simpler_ns != 0) {
    std::printf("chain vs the serial floor: %.2fx (target <= 1.5x: %s)\n",
                c.simpler_ns / c.floor_ns, verdict(c.simpler_ns, c.floor_ns, 1.5));
  }
  if (!o.simpler_only) print_scoped(results, o);
  return 0;
}

// Per-task cost against the run's size and against the dependencies per task.
int run_scaling(SimplerPatternRunner& runner, SerialFloor& floor, const Options& o) {
  // `sc_ns` (if given): the scoped run's figure too (the queued path).
  auto point = [&](int pattern, uint64_t tasks, uint32_t k, double* s_ns, double* f_ns,
                   double* sc_ns = nullptr) {
    std::vector<double> full, empty, fl, scoped;
    runner.run(pattern, tasks, false, k);  // warm up
    if (sc_ns != nullptr) runner.run(pattern, tasks, false, k, /*scoped=*/true);
    for (int r = 0; r < o.reps; ++r) {
      full.push_back(runner.run(pattern, tasks, false, k));
      empty.push_back(runner.run(pattern, 0, false, k));
      fl.push_back(floor.run(pattern, tasks, false, k));
      if (sc_ns != nullptr) scoped.push_back(runner.run(pattern, tasks, false, k, /*scoped=*/true));
    }
    *s_ns = per_task(full, empty, tasks);
    *f_ns = median(fl) / static_cast<double>(tasks);
    if (sc_ns != nullptr) *sc_ns = per_task(scoped, empty, tasks);
  };
  std::printf("tasks per run (1 dep per task)   simpler ns/task   floor ns/task   vs median\n");
  std::vector<uint64_t> sizes;
  for (uint64_t n = 1000; n <= o.largest; n *= 10) sizes.push_back(n);
  const int count = static_cast<int>(sizes.size());
  std::vector<double> s_at(sizes.size()), f_at(sizes.size());
  for (int i = 0; i < count; ++i) point(BENCH_DEPSK, sizes[i], 1, &s_at[i], &f_at[i]);
  const double mid = median(s_at);
  double worst = 0;
  for (int i = 0; i < count; ++i) {
    const double dev = s_at[i] / mid - 1.0;
    worst = std::max(worst, std::fabs(dev));
    std::printf("%-32llu %15.1f %15.1f %+10.0f%%\n", static_cast<unsigned long long>(sizes[i]),
                s_at[i], f_at[i], 100.0 * dev);
  }
  std::printf("flat within +-20%%: %s (largest deviation from the median %.0f%%)\n\n",
              worst <= 0.2 ? "met" : "MISSED", 100.0 * worst);
  std::printf("deps per task (%llu tasks)       simpler ns/task   floor ns/task  scoped ns/task\n",
              static_cast<unsigned long long>(o.tasks));
  std::vector<double> ks, s_k, g_k;
  for (uint32_t k = 0; k <= BENCH_MAX_DEPS; ++k) {
    double s = 0, f = 0, g = 0;
    point(BENCH_DEPSK, o.tasks, k, &s, &f, &g);
    std::printf("%-32u %15.1f %15.1f %15.1f\n", k, s, f, g);
    ks.push_back(k);
    s_k.push_back(s);
    g_k.push_back(g);
  }
  auto slope = [&](const std::vector<double>& y) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < ks.size(); ++i) {
      sx += ks[i];
      sy += y[i];
      sxx += ks[i] * ks[i];
      sxy += ks[i] * y[i];
    }
    const double n = static_cast<double>(ks.size());
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
  };
  const double s_slope = slope(s_k), g_slope = slope(g_k);
  std::printf("least-squares slope: %.1f ns per extra dependency (%.0f%% of the 0-dep cost)\n",
              s_slope, s_k[0] > 0 ? 100.0 * s_slope / s_k[0] : 0.0);
  std::printf("scoped (the queued path): %.1f ns per extra dependency (%.0f%% of the 0-dep cost)\n",
              g_slope, g_k[0] > 0 ? 100.0 * g_slope / g_k[0] : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  omp_set_num_threads(kPeerThreads);
  const uint64_t max_tasks = o.scaling ? std::max(o.tasks, o.largest) : o.tasks;
  const uint64_t max_slots = max_tasks + BENCH_MAX_DEPS + BENCH_FAN_IN_WIDTH + 1;
  try {
    SimplerPatternRunner runner(SIMPLER_BENCH_ORCHESTRATION_PATH, SIMPLER_BENCH_KERNEL_PATH,
                                max_slots);
    SerialFloor floor(simpler::rt::kDefaultTaskWindow);
    std::printf(
        "task_overhead_bench: %llu tasks per run, median of %d runs, %u hardware threads; "
        "peers with %d threads%s\n",
        static_cast<unsigned long long>(o.tasks), o.reps, std::thread::hardware_concurrency(),
        kPeerThreads,
#if SIMPLER_BENCH_HAVE_TBB
        ""
#else
        " (built without oneTBB: no tbb columns)"
#endif
    );
    if (o.scaling) return run_scaling(runner, floor, o);
    Peers peers;
    peers.slots.assign(max_slots, 0.0f);
    return run_table(runner, floor, peers, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "task_overhead_bench: %s\n", e.what());
    return 1;
  }
}
