// Caller-visible kernel-mode launch cost, side by side with two anchors measured in the
// same run (anchors.h). Not a test: prints figures, ratios and the targets.
//
// Usage: kernel_launch_bench [--quick] [--samples N] [--sustained N] [--orchestration PATH]
//        kernel_launch_bench --futex-probe N   (for strace; see busy_window.h)
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "anchors.h"
#include "busy_window.h"
#include "latency.h"
#include "launchers.h"

namespace {

using namespace simpler::bench;

struct Options {
  size_t samples = 100000;   // per subject, split over the rounds
  size_t rounds = 5;         // subjects are interleaved round by round
  size_t batch = 32;         // launches between two stream synchronizations
  size_t sustained = 20000;  // back-to-back launches
  size_t window = 2000;      // launches per busy window
  size_t futex_probe = 0;    // --futex-probe N
  std::string orchestration = SIMPLER_BENCH_EMPTY_ORCHESTRATION_PATH;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kernel_launch_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") {
      o.samples = 5000;
      o.sustained = 2000;
      o.window = 200;
    } else if (a == "--samples") {
      o.samples = std::strtoull(value(), nullptr, 10);
    } else if (a == "--sustained") {
      o.sustained = std::strtoull(value(), nullptr, 10);
    } else if (a == "--futex-probe") {
      o.futex_probe = std::strtoull(value(), nullptr, 10);
    } else if (a == "--orchestration") {
      o.orchestration = value();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--samples N] [--sustained N] [--orchestration PATH] | "
                   "--futex-probe N\n",
                   argv[0]);
      std::exit(2);
    }
  }
  if (o.samples < o.rounds * o.batch) o.samples = o.rounds * o.batch;
  return o;
}

// Prints the caller's thread id, then runs one unmarked warm-up window (pools and queues
// reach their steady-state size) and one marked window of each kind.
int futex_probe(const Options& o) {
  auto worker = make_launcher(LaunchPath::WORKER, 0, o.orchestration);
  std::printf("caller_tid %ld\n", static_cast<long>(syscall(SYS_gettid)));
  std::fflush(stdout);
  launch_window(*worker, o.futex_probe, /*gated=*/true, /*mark=*/false);
  launch_window(*worker, o.futex_probe, /*gated=*/true, /*mark=*/true);
  launch_window(*worker, o.futex_probe, /*gated=*/false, /*mark=*/true);
  return 0;
}

void print_row(const char* name, const Latency& l, double spsc_ns, const char* note) {
  std::printf("%-38s %9.0f %9.0f %10.1fx  %s\n", name, l.p50, l.p99, l.p50 / spsc_ns, note);
}

const char* verdict(bool met) { return met ? "met" : "MISSED"; }

int run(const Options& o) {
  const double overhead = timer_overhead_ns();
  std::vector<std::unique_ptr<Launcher>> launchers;
  launchers.push_back(make_launcher(LaunchPath::WORKER, 0, o.orchestration));
  launchers.push_back(make_launcher(LaunchPath::CHIP_WORKER, 1, o.orchestration));
  launchers.push_back(make_launcher(LaunchPath::C_ABI, 2, o.orchestration));
  sim_stream_t host_stream = nullptr;
  if (sim_set_device(3) != 0 || sim_stream_create(&host_stream) != 0) {
    std::fprintf(stderr, "kernel_launch_bench: cannot create a stream on device 3\n");
    return 1;
  }

  // Warm up every path (lazy executor threads, pools, first-touch), then interleave.
  const size_t per_round = o.samples / o.rounds;
  std::vector<double> spsc, spsc_amortized, host, host_held, worker_held;
  std::vector<std::vector<double>> chip(launchers.size());
  {
    std::vector<double> scratch;
    std::vector<double> scratch2;
    collect_spsc_submit(o.batch * 8, o.batch, overhead, scratch, scratch2);
    collect_host_func_enqueue(host_stream, o.batch * 8, o.batch, overhead, scratch);
    for (auto& l : launchers)
      collect_latency([&] { l->launch(); }, [&] { l->synchronize(); }, o.batch * 8, o.batch,
                      overhead, scratch);
  }
  for (size_t r = 0; r < o.rounds; ++r) {
    collect_spsc_submit(per_round, o.batch, overhead, spsc, spsc_amortized);
    collect_host_func_enqueue(host_stream, per_round, o.batch, overhead, host);
    for (size_t i = 0; i < launchers.size(); ++i) {
      Launcher& l = *launchers[i];
      collect_latency([&] { l.launch(); }, [&] { l.synchronize(); }, per_round, o.batch, overhead,
                      chip[i]);
    }
    collect_latency_held(
        host_stream,
        [&] {
          (void)sim_launch_host_func(
              host_stream, [](void*) {}, nullptr);
        },
        [&] { (void)sim_stream_synchronize(host_stream); }, per_round, o.batch, overhead,
        host_held);
    Launcher& w = *launchers[0];
    collect_latency_held(
        w.stream(), [&] { w.launch(); }, [&] { w.synchronize(); }, per_round, o.batch, overhead,
        worker_held);
  }

  const Latency spsc_l = summarize(spsc);
  // The ratio denominator: a push costs less than the clock's resolution, so per-push
  // timings are mostly timer noise; the median of batch-amortized costs is stable.
  const double spsc_ns = std::max(1.0, summarize(spsc_amortized).p50);
  std::printf(
      "kernel_launch_bench: %zu samples per row (%zu rounds, %zu launches between "
      "synchronizations), 4 DEVICE tensor args, %u hardware threads; timer overhead "
      "%.0f ns subtracted\n",
      spsc_l.samples, o.rounds, o.batch, std::thread::hardware_concurrency(), overhead);
  std::printf(
      "(b) SPSC submit amortized over batches of %zu pushes: %.1f ns per push "
      "(the denominator of the ratio column)\n",
      o.batch, spsc_ns);
  std::printf("%-38s %9s %9s %11s  %s\n", "enqueue path", "p50 ns", "p99 ns", "p50/SPSC", "");
  print_row("(b) SPSC submit, spinning consumer", spsc_l, spsc_ns, "anchor (timed per push)");
  const Latency host_l = summarize(host);
  print_row("(a) sim_launch_host_func (empty fn)", host_l, spsc_ns, "anchor");
  Latency worker_l;
  for (size_t i = 0; i < launchers.size(); ++i) {
    const Latency l = summarize(chip[i]);
    if (i == 0) worker_l = l;
    print_row(launchers[i]->name(), l, spsc_ns, "");
  }
  std::printf("target C++ Worker::kernel_launch p50 <= 3x the bare sim enqueue (a): %s (%.2fx)\n",
              verdict(worker_l.p50 <= 3 * host_l.p50), worker_l.p50 / host_l.p50);
  // The same two with the stream held for each batch: the launching thread alone.
  const Latency host_held_l = summarize(host_held);
  const Latency worker_held_l = summarize(worker_held);
  print_row("(a) stream held: sim_launch_host_func", host_held_l, spsc_ns, "");
  print_row("stream held: C++ Worker::kernel_launch", worker_held_l, spsc_ns, "");
  std::printf("stream held (the launching thread alone): Worker::kernel_launch / (a) = %.2fx\n",
              worker_held_l.p50 / std::max(1.0, host_held_l.p50));
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) std::printf("load average (1 min) at the end: %.1f\n", load[0]);

  // Sustained: back-to-back launches of the empty program on one stream, then one sync.
  for (size_t i : {size_t{0}, size_t{2}}) {
    Launcher& l = *launchers[i];
    const auto start = Clock::now();
    for (size_t k = 0; k < o.sustained; ++k) l.launch();
    const auto enqueued = Clock::now();
    l.synchronize();
    const auto done = Clock::now();
    const double per_s = static_cast<double>(o.sustained) / (ns_between(start, done) * 1e-9);
    const double enqueue_per_s =
        static_cast<double>(o.sustained) / (ns_between(start, enqueued) * 1e-9);
    std::printf(
        "sustained %-32s %10.3f M launches/s completed (enqueue alone %.3f M/s)%s\n", l.name(),
        per_s / 1e6, enqueue_per_s / 1e6,
        i == 0 ? (per_s >= 2e6 ? "  target >= 2 M/s: met" : "  target >= 2 M/s: MISSED") : "");
  }

  // The executor's side of a launch: what the stream thread spends per queued launch
  // (the run of the empty program), against a queued empty host function.
  {
    auto median_drain = [&](sim_stream_t stream, const std::function<void()>& enqueue,
                            const std::function<void()>& sync) {
      std::vector<DrainCost> runs;
      for (int k = 0; k < 3; ++k) runs.push_back(gated_drain(stream, enqueue, sync, o.sustained));
      std::sort(runs.begin(), runs.end(), [](const DrainCost& a, const DrainCost& b) {
        return a.executor_cpu_ns < b.executor_cpu_ns;
      });
      return runs[1];
    };
    const DrainCost anchor = median_drain(
        host_stream,
        [&] {
          (void)sim_launch_host_func(
              host_stream, [](void*) {}, nullptr);
        },
        [&] { (void)sim_stream_synchronize(host_stream); });
    std::printf(
        "executor per queued op (gated drain of %zu, median of 3): (a) empty host function %.0f "
        "ns CPU (%.0f ns wall)\n",
        o.sustained, anchor.executor_cpu_ns, anchor.wall_ns);
    for (size_t i : {size_t{0}, size_t{2}}) {
      Launcher& l = *launchers[i];
      const DrainCost d = median_drain(
          l.stream(), [&] { l.launch(); }, [&] { l.synchronize(); });
      std::printf(
          "executor per queued launch (empty program), %-32s %.0f ns CPU (%.0f ns wall)%s\n",
          l.name(), d.executor_cpu_ns, d.wall_ns,
          i == 0 ? (d.executor_cpu_ns <= 500 ? "  (<= 500 ns: 2 M/s possible)"
                                             : "  (> 500 ns: 2 M/s out of reach)")
                 : "");
    }
  }
  sim_stream_destroy(host_stream);

  // Busy device: does the caller's thread block? (strace counts futex calls: bench.sh)
  Launcher& w = *launchers[0];
  launch_window(w, o.window, true, false);  // warm-up: pools reach their in-flight size
  const ThreadSwitches gated = launch_window(w, o.window, true, false);
  const ThreadSwitches running = launch_window(w, o.window, false, false);
  std::printf(
      "caller thread voluntary context switches per launch while busy (getrusage): "
      "stream held %.4f, stream running launches %.4f (involuntary: %.4f, %.4f)\n",
      static_cast<double>(gated.voluntary) / o.window,
      static_cast<double>(running.voluntary) / o.window,
      static_cast<double>(gated.involuntary) / o.window,
      static_cast<double>(running.involuntary) / o.window);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    return o.futex_probe ? futex_probe(o) : run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_launch_bench: %s\n", e.what());
    return 1;
  }
}
