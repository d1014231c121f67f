// A 1-D float32 device tensor over a whole allocation: the descriptor the view-cache tests
// start from.
#pragma once

#include <cstdint>

#include "simpler/task/task_interface.h"

namespace simpler::rt::testing {

inline ChipTensor one_dim_device_floats(uint64_t addr, uint64_t bytes) {
  ChipTensor t{};
  t.buffer = {addr, bytes};
  t.ndims = 1;
  t.dtype = CHIP_DT_FLOAT32;
  t.space = CHIP_SPACE_DEVICE;
  t.shapes[0] = static_cast<int64_t>(bytes / sizeof(float));
  t.strides[0] = 1;
  return t;
}

}  // namespace simpler::rt::testing
