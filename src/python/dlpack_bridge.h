// DLPack (Debian's libdlpack-dev, <dlpack/dlpack.h>, v0.6 unversioned capsules) in and out
// of simpler.
//
// The simulated device's DLPack device type is kDLExtDev (12), device_id = the sim device
// index. Sim device memory is host memory, so a kDLCPU tensor whose bytes lie inside one
// live sim allocation is device memory too (that is how numpy/torch views of a
// sim.DeviceArray come back); any other kDLCPU tensor is host memory.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "simpler/task/task_interface.h"

namespace simpler::python {

inline constexpr int32_t kSimDLDeviceType = kDLExtDev;

// The DataType of a DLPack dtype (lanes 1 only), or nullopt.
std::optional<DataType> data_type_of(DLDataType t);
DLDataType dl_data_type_of(DataType dtype);  // BOOL exports as kDLUInt 8 (DLPack 0.6)

// What a DLPack producer exported, copied out of its DLManagedTensor (whose deleter has
// already run: simpler only borrows, the caller keeps the producer alive).
struct DLPackView {
  int32_t device_type = 0;
  int32_t device_id = 0;
  uint64_t data = 0;  // data + byte_offset
  std::vector<int64_t> shape;
  bool compact = true;  // C-contiguous (no strides, or row-major compact strides)
  std::optional<DataType> dtype;
  DLDataType dl_dtype{};
};

// (device_type, device_id) from obj.__dlpack_device__().
std::pair<int32_t, int32_t> dlpack_device(pybind11::handle obj);
// Calls obj.__dlpack__(), reads the tensor, then releases the export.
DLPackView dlpack_borrow(pybind11::handle obj);

// A "dltensor" capsule over `data` whose DLManagedTensor holds a reference to `owner`
// until the consumer calls its deleter (or the capsule dies unconsumed).
pybind11::capsule dlpack_export(pybind11::handle owner, uint64_t data,
                                const std::vector<int64_t>& shape, DataType dtype,
                                int32_t device_type, int32_t device_id);

}  // namespace simpler::python
