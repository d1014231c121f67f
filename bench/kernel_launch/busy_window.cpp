#include "busy_window.h"

#include "latency.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>

namespace simpler::bench {
namespace {

// Holds a stream's executor until opened.
struct Gate {
  std::atomic<bool> open{false};
  static void wait(void* p) {
    auto* g = static_cast<Gate*>(p);
    while (!g->open.load(std::memory_order_acquire)) g->open.wait(false);
  }
  void release() {
    open.store(true, std::memory_order_release);
    open.notify_all();
  }
};

// Like Gate, and reads the executor's CPU clock when it is let through.
struct TimedGate {
  std::atomic<bool> open{false};
  clockid_t executor_clock{};
  int64_t executor_cpu_at_open = 0;
  static int64_t cpu_ns(clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return t.tv_sec * int64_t{1000000000} + t.tv_nsec;
  }
  static void wait(void* p) {
    auto* g = static_cast<TimedGate*>(p);
    pthread_getcpuclockid(pthread_self(), &g->executor_clock);
    while (!g->open.load(std::memory_order_acquire)) g->open.wait(false);
    g->executor_cpu_at_open = cpu_ns(g->executor_clock);
  }
};

ThreadSwitches thread_switches() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return {u.ru_nvcsw, u.ru_nivcsw};
}

void marker() { syscall(SYS_getppid); }

}  // namespace

ThreadSwitches launch_window(Launcher& launcher, size_t launches, bool gated, bool mark) {
  Gate gate;
  if (gated) {
    if (int rc = sim_launch_host_func(launcher.stream(), &Gate::wait, &gate))
      throw std::runtime_error(std::string("sim_launch_host_func: ") + simpler_status_name(rc));
  } else {
    for (int i = 0; i < 16; ++i) launcher.launch();  // the device is now working on these
  }
  ThreadSwitches before, after;
  try {
    if (mark) marker();
    before = thread_switches();
    for (size_t i = 0; i < launches; ++i) launcher.launch();
    after = thread_switches();
    if (mark) marker();
  } catch (...) {
    gate.release();  // never leave the stream blocked on a gate that is about to vanish
    launcher.synchronize();
    throw;
  }
  gate.release();
  launcher.synchronize();
  return {after.voluntary - before.voluntary, after.involuntary - before.involuntary};
}

void collect_latency_held(sim_stream_t stream, const std::function<void()>& enqueue,
                          const std::function<void()>& synchronize, size_t samples, size_t batch,
                          double timer_overhead, std::vector<double>& out) {
  auto gate = std::make_unique<Gate>();
  auto hold = [&] {
    gate = std::make_unique<Gate>();
    if (int rc = sim_launch_host_func(stream, &Gate::wait, gate.get()))
      throw std::runtime_error(std::string("sim_launch_host_func: ") + simpler_status_name(rc));
  };
  auto let_go = [&] {
    gate->release();
    synchronize();
  };
  hold();
  try {
    collect_latency(
        enqueue,
        [&] {
          let_go();
          hold();
        },
        samples, batch, timer_overhead, out);
  } catch (...) {
    let_go();  // never leave the stream blocked on a gate that is about to vanish
    throw;
  }
  let_go();
}

DrainCost gated_drain(sim_stream_t stream, const std::function<void()>& enqueue,
                      const std::function<void()>& synchronize, size_t ops) {
  TimedGate gate;
  if (int rc = sim_launch_host_func(stream, &TimedGate::wait, &gate))
    throw std::runtime_error(std::string("sim_launch_host_func: ") + simpler_status_name(rc));
  auto open = [&] {
    gate.open.store(true, std::memory_order_release);
    gate.open.notify_all();
  };
  try {
    for (size_t i = 0; i < ops; ++i) enqueue();
  } catch (...) {
    open();
    synchronize();
    throw;
  }
  const auto start = std::chrono::steady_clock::now();
  open();
  synchronize();
  const auto end = std::chrono::steady_clock::now();
  const int64_t cpu = TimedGate::cpu_ns(gate.executor_clock) - gate.executor_cpu_at_open;
  const auto n = static_cast<double>(ops);
  return {static_cast<double>(cpu) / n,
          static_cast<double>(
              std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()) /
              n};
}

}  // namespace simpler::bench
