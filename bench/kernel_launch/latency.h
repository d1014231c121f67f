// Per-call latency sampling: each call is timed on its own with steady_clock, in batches
// (drained, untimed, between batches so queues stay short), and the median cost of the
// clock pair itself is subtracted.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace simpler::bench {

using Clock = std::chrono::steady_clock;

struct Latency {
  double p50 = 0;  // ns
  double p99 = 0;  // ns
  size_t samples = 0;
};

inline double ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

inline double percentile(std::vector<double>& sorted_or_not, double q) {
  std::sort(sorted_or_not.begin(), sorted_or_not.end());
  if (sorted_or_not.empty()) return 0;
  const size_t i = std::min(sorted_or_not.size() - 1,
                            static_cast<size_t>(q * static_cast<double>(sorted_or_not.size())));
  return sorted_or_not[i];
}

// Median cost of two back-to-back Clock::now() calls.
inline double timer_overhead_ns() {
  std::vector<double> v(20000);
  for (double& x : v) {
    const auto a = Clock::now();
    const auto b = Clock::now();
    x = ns_between(a, b);
  }
  return percentile(v, 0.5);
}

// Appends the cost of each submit() call (ns, timer overhead removed) to `out`: `samples`
// calls in batches of `batch`, with drain() (untimed) after each batch.
template <class Submit, class Drain>
void collect_latency(Submit&& submit, Drain&& drain, size_t samples, size_t batch,
                     double timer_overhead, std::vector<double>& out) {
  size_t done = 0;
  while (done < samples) {
    for (size_t i = 0; i < batch && done < samples; ++i, ++done) {
      const auto a = Clock::now();
      submit();
      const auto b = Clock::now();
      out.push_back(std::max(0.0, ns_between(a, b) - timer_overhead));
    }
    drain();
  }
}

inline Latency summarize(std::vector<double> ns) {
  Latency l;
  l.samples = ns.size();
  l.p50 = percentile(ns, 0.50);
  l.p99 = percentile(ns, 0.99);
  return l;
}

}  // namespace simpler::bench
