// simpler — a host buffer created by Worker::create_buffer (program mode). HOST tensors
// made over it are staged to the device by the runtime for each run and copied back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace simpler {

class HostBuffer {
 public:
  // Zero-filled, 64-byte aligned; nbytes must be > 0 (std::invalid_argument otherwise).
  explicit HostBuffer(size_t nbytes);
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() const noexcept { return storage_.get(); }
  size_t nbytes() const noexcept { return nbytes_; }
  uint64_t address() const noexcept { return reinterpret_cast<uint64_t>(storage_.get()); }
  bool overlaps(uint64_t addr, uint64_t size) const noexcept;

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, AlignedFree> storage_;
  size_t nbytes_;
};

}  // namespace simpler
