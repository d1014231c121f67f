#include "abi/checked_args.h"

#include <cstring>

namespace simpler::rt::host {

bool CheckedArgs::matches(const ChipStorageTaskArgs& args, uint64_t memory_generation) const {
  if (args.tensor_count != tensor_count_ || args.scalar_count != scalar_count_ ||
      memory_generation != generation_) {
    return false;
  }
  // Whole tensors of a constant size: the compiler compares them with vector loads.
  for (uint32_t i = 0; i < tensor_count_; ++i) {
    if (std::memcmp(&args.tensors[i], &tensors_[i], sizeof(ChipTensor)) != 0) return false;
  }
  return true;
}

void CheckedArgs::remember(const ChipStorageTaskArgs& args, uint64_t memory_generation) {
  if (args.tensor_count > kMaxTensors) {
    tensor_count_ = UINT32_MAX;
    return;
  }
  for (uint32_t i = 0; i < args.tensor_count; ++i) tensors_[i] = args.tensors[i];
  tensor_count_ = args.tensor_count;
  scalar_count_ = args.scalar_count;
  generation_ = memory_generation;
}

}  // namespace simpler::rt::host
