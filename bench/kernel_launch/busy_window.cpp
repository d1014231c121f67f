#include "busy_window.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
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

}  // namespace simpler::bench
