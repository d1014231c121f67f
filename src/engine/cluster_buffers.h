// The cluster-local buffers of cluster (MIX) tasks (kernel_abi.h SimplerClusterOps.buffer):
// one mapping with an inaccessible guard region before, between and after the buffers, so
// a part that writes past its buffer faults (a typed KERNEL_FAULT through the fault guard)
// instead of corrupting the next cluster's tiles or the host heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace simpler::rt {

class ClusterBuffers {
 public:
  // nullptr when the mapping fails (out of address space).
  static std::unique_ptr<ClusterBuffers> create(uint32_t clusters);
  ~ClusterBuffers();
  ClusterBuffers(const ClusterBuffers&) = delete;
  ClusterBuffers& operator=(const ClusterBuffers&) = delete;

  // SIMPLER_CLUSTER_BUFFER_BYTES of cluster `cluster`.
  uint8_t* at(uint32_t cluster) const;

 private:
  ClusterBuffers(uint8_t* base, size_t bytes) : base_(base), bytes_(bytes) {}
  uint8_t* base_;
  size_t bytes_;
};

}  // namespace simpler::rt
