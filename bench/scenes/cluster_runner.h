// Runs one block of a cluster (MIX) task without simpler, for the serial floor and the
// oneTBB driver: the AIC part on the calling thread, the AIV parts on two helper threads
// of this runner, all started together, with a cluster buffer and counting flags and a
// barrier as the chip provides them (SimplerClusterOps). A cluster task's parts wait for
// each other, so no single thread can run them one after another; this is the least a
// runtime-free driver needs. A wait that lasts 10 s returns an error instead of hanging.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "simpler/kernel/kernel_abi.h"

namespace simpler::bench {

class ClusterRunner {
 public:
  ClusterRunner();
  ~ClusterRunner();
  ClusterRunner(const ClusterRunner&) = delete;
  ClusterRunner& operator=(const ClusterRunner&) = delete;

  // Runs `kernel` with the kernel arguments `args` (tensors then scalars, as the kernel
  // sees them) as block `block` of `block_num`. Returns the CPU seconds the three parts
  // used together; a part's fault code (nonzero) is stored in *fault.
  double run(simpler_kernel_entry_fn kernel, const std::vector<int64_t>& args, uint32_t block,
             uint32_t block_num, int32_t* fault);

 private:
  struct Handle {
    ClusterRunner* runner;
  };
  void helper(uint32_t part);
  double run_part(uint32_t part);
  int barrier();
  int set_flag(uint32_t flag);
  int wait_flag(uint32_t flag);

  std::mutex mutex_;
  std::condition_variable changed_;
  // The job: written before `serial_` moves on, read by the helpers.
  simpler_kernel_entry_fn kernel_ = nullptr;
  std::vector<int64_t> args_;
  uint32_t block_ = 0, block_num_ = 1;
  int32_t fault_ = 0;
  uint64_t serial_ = 0;  // jobs started
  uint32_t finished_ = 0;
  double cpu_ = 0;
  bool stop_ = false;
  uint32_t flags_[SIMPLER_CLUSTER_FLAG_COUNT] = {};
  uint32_t arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<uint8_t> buffer_;
  Handle handle_{this};
  std::vector<std::thread> helpers_;
};

}  // namespace simpler::bench
