// Not a test: measures the two numbers the stream design is built for and prints them.
//   enqueue latency of an empty host function (p50, p99), executor awake
//   sustained throughput of device jobs that return at once, one stream
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "simpler/sim/sim_driver.h"

namespace {

void empty_host_fn(void*) {}
int empty_job(void*) { return 0; }

int check(int status, const char* what) {
  if (status != SIMPLER_OK)
    std::fprintf(stderr, "%s failed: %s\n", what, simpler_status_name(status));
  return status;
}

}  // namespace

int main() {
  using clock = std::chrono::steady_clock;
  if (check(sim_set_device(0), "sim_set_device")) return 1;
  sim_stream_t stream = nullptr;
  if (check(sim_stream_create(&stream), "sim_stream_create")) return 1;

  constexpr int kWarmup = 20000;
  constexpr int kSamples = 200000;
  for (int i = 0; i < kWarmup; ++i) sim_launch_host_func(stream, empty_host_fn, nullptr);
  sim_stream_synchronize(stream);
  std::vector<double> ns(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    const auto t0 = clock::now();
    sim_launch_host_func(stream, empty_host_fn, nullptr);
    ns[static_cast<size_t>(i)] =
        std::chrono::duration<double, std::nano>(clock::now() - t0).count();
  }
  if (check(sim_stream_synchronize(stream), "sim_stream_synchronize")) return 1;
  std::sort(ns.begin(), ns.end());
  std::printf("enqueue empty host func: p50 %.0f ns, p99 %.0f ns\n", ns[kSamples / 2],
              ns[kSamples * 99 / 100]);

  constexpr int kJobs = 2000000;
  const auto start = clock::now();
  for (int i = 0; i < kJobs; ++i) sim_launch_device_job(stream, empty_job, nullptr, nullptr);
  if (check(sim_stream_synchronize(stream), "sim_stream_synchronize")) return 1;
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  std::printf("device jobs (return at once), one stream: %.2f M/s\n", kJobs / seconds / 1e6);
  return check(sim_stream_destroy(stream), "sim_stream_destroy") == SIMPLER_OK ? 0 : 1;
}
