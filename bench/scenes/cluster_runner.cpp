#include "cluster_runner.h"

#include <time.h>

#include <chrono>
#include <cstring>

namespace simpler::bench {
namespace {

constexpr uint32_t kParts = SIMPLER_CLUSTER_AIC_CORES + SIMPLER_CLUSTER_AIV_CORES;
constexpr auto kWaitLimit = std::chrono::seconds(10);

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

ClusterRunner::ClusterRunner() : buffer_(SIMPLER_CLUSTER_BUFFER_BYTES) {
  for (uint32_t part = 1; part < kParts; ++part)
    helpers_.emplace_back([this, part] { helper(part); });
}

ClusterRunner::~ClusterRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

double ClusterRunner::run(simpler_kernel_entry_fn kernel, const std::vector<int64_t>& args,
                          uint32_t block, uint32_t block_num, int32_t* fault) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kernel_ = kernel;
    args_ = args;
    block_ = block;
    block_num_ = block_num;
    fault_ = 0;
    finished_ = 0;
    cpu_ = 0;
    std::memset(flags_, 0, sizeof flags_);
    arrived_ = 0;
    ++serial_;
  }
  changed_.notify_all();
  const double own = run_part(0);
  std::unique_lock<std::mutex> lock(mutex_);
  cpu_ += own;
  ++finished_;
  changed_.wait(lock, [&] { return finished_ == kParts; });
  if (fault_ != 0) *fault = fault_;
  return cpu_;
}

void ClusterRunner::helper(uint32_t part) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || serial_ != seen; });
      if (stop_) return;
      seen = serial_;
    }
    const double cpu = run_part(part);
    std::lock_guard<std::mutex> lock(mutex_);
    cpu_ += cpu;
    if (++finished_ == kParts) changed_.notify_all();
  }
}

double ClusterRunner::run_part(uint32_t part) {
  const double start = thread_cpu_seconds();
  int32_t fault = 0;
  SimplerClusterOps ops{};
  ops.cluster = &handle_;
  ops.buffer = buffer_.data();
  ops.buffer_bytes = buffer_.size();
  ops.aiv_idx = part == 0 ? 0 : part - 1;
  ops.aiv_num = SIMPLER_CLUSTER_AIV_CORES;
  ops.barrier = [](void* h) { return static_cast<Handle*>(h)->runner->barrier(); };
  ops.set_flag = [](void* h, uint32_t f) { return static_cast<Handle*>(h)->runner->set_flag(f); };
  ops.wait_flag = [](void* h, uint32_t f) { return static_cast<Handle*>(h)->runner->wait_flag(f); };
  SimplerKernelContext context{block_, block_num_, part == 0 ? SIMPLER_CORE_AIC : SIMPLER_CORE_AIV,
                               part,   &fault,     &ops};
  std::vector<int64_t> argv(1 + args_.size());
  argv[0] = reinterpret_cast<int64_t>(&context);
  std::memcpy(argv.data() + 1, args_.data(), args_.size() * sizeof(int64_t));
  kernel_(argv.data() + 1);
  if (fault != 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    fault_ = fault;
  }
  return thread_cpu_seconds() - start;
}

int ClusterRunner::barrier() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t generation = generation_;
  if (++arrived_ == kParts) {
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
    return 0;
  }
  return changed_.wait_for(lock, kWaitLimit, [&] { return generation_ != generation; }) ? 0 : -1;
}

int ClusterRunner::set_flag(uint32_t flag) {
  if (flag >= SIMPLER_CLUSTER_FLAG_COUNT) return -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++flags_[flag];
  }
  changed_.notify_all();
  return 0;
}

int ClusterRunner::wait_flag(uint32_t flag) {
  if (flag >= SIMPLER_CLUSTER_FLAG_COUNT) return -1;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_for(lock, kWaitLimit, [&] { return flags_[flag] > 0; })) return -1;
  --flags_[flag];
  return 0;
}

}  // namespace simpler::bench
