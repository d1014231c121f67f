// simpler.sim.DeviceArray's native core: a contiguous array in simulated device memory
// that owns its allocation.
//
// Freed in stream order: an array tied to a stream (stream=...) enqueues its free on that
// stream when it is freed or collected, so work already queued there that reads or writes
// it finishes first (like a stream-ordered allocator's free). An array without a stream is
// freed with sim_free at once.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "simpler/sim/sim_driver.h"
#include "simpler/task/task_interface.h"

namespace simpler::python {

class DeviceArray {
 public:
  // Allocates numel * element size bytes (at least 1) on the calling thread's current device.
  // `stream`: None, an int handle or an object with .handle (kept referenced).
  DeviceArray(std::vector<int64_t> shape, DataType dtype, pybind11::object stream);
  ~DeviceArray();
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  // 0 once freed, and once its device was reset (sim.device_reset frees all its memory).
  uint64_t ptr() const { return live() ? ptr_ : 0; }
  uint64_t nbytes() const { return nbytes_; }
  int32_t device() const { return device_; }
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const pybind11::object& stream() const { return stream_; }
  // A DEVICE ChipTensor over the array (throws when freed).
  ChipTensor tensor() const;
  // The same without throwing: false when freed or reset (one liveness check, for the
  // launch path, which reports the argument's index itself).
  bool tensor_if_live(ChipTensor* out) const;
  // Frees now (stream-ordered when tied to a stream); idempotent.
  void free();

 private:
  // False once freed or once the device's reset epoch moved past the allocation's: the
  // address may then belong to someone else's allocation and must never be touched.
  bool live() const;

  std::vector<int64_t> shape_;
  DataType dtype_;
  uint64_t nbytes_ = 0;
  uint64_t ptr_ = 0;
  int32_t device_ = -1;
  uint64_t reset_epoch_ = 0;  // the device's reset epoch when the memory was allocated
  // The DEVICE tensor over the allocation, made once: every field is fixed for the array's
  // life, so the launch path copies it instead of rebuilding it (about 300 instructions).
  ChipTensor make_device_tensor() const;  // throws what make_tensor refuses
  ChipTensor tensor_{};
  bool tensor_made_ = false;  // false: make_tensor refused it; tensor_if_live retries (throws)
  pybind11::object stream_;   // None or the stream object/handle
  sim_stream_t stream_handle_ = nullptr;
};

void bind_device_array(pybind11::module_& sim);  // into simpler._native.sim

}  // namespace simpler::python
