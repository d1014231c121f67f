#include "anchors.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "latency.h"
#include "spsc_ring.h"
#include "support/cpu_relax.h"

namespace simpler::bench {
namespace {

using simpler::support::cpu_relax;

void empty_host_fn(void*) {}

}  // namespace

void collect_spsc_submit(size_t samples, size_t batch, double timer_overhead,
                         std::vector<double>& out, std::vector<double>& amortized) {
  SpscRing ring(4096);
  std::atomic<bool> stop{false};
  std::thread consumer([&] {
    HandoffMessage m;
    while (!stop.load(std::memory_order_relaxed)) {
      if (!ring.try_pop(&m)) cpu_relax();
    }
  });
  const HandoffMessage message{1, &ring, nullptr, {}};
  auto push = [&] {
    while (!ring.try_push(message)) std::this_thread::yield();
  };
  // The consumer may be descheduled on a busy machine: yield rather than spin.
  auto drain = [&] {
    while (ring.popped() != ring.pushed()) std::this_thread::yield();
  };
  collect_latency(push, drain, samples, batch, timer_overhead, out);
  for (size_t done = 0; done + batch <= samples; done += batch) {
    const auto a = Clock::now();
    for (size_t i = 0; i < batch; ++i) push();
    const auto b = Clock::now();
    amortized.push_back((ns_between(a, b) - timer_overhead) / static_cast<double>(batch));
    drain();
  }
  stop.store(true);
  consumer.join();
}

void collect_host_func_enqueue(sim_stream_t stream, size_t samples, size_t batch,
                               double timer_overhead, std::vector<double>& out) {
  collect_latency(
      [&] {
        if (int rc = sim_launch_host_func(stream, empty_host_fn, nullptr))
          throw std::runtime_error(std::string("sim_launch_host_func: ") + simpler_status_name(rc));
      },
      [&] {
        if (int rc = sim_stream_synchronize(stream))
          throw std::runtime_error(std::string("sim_stream_synchronize: ") +
                                   simpler_status_name(rc));
      },
      samples, batch, timer_overhead, out);
}

}  // namespace simpler::bench
