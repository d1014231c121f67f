#include "abi/checked_args.h"

#include <cstring>

namespace simpler::rt::host {

bool CheckedArgs::matches(const ChipStorageTaskArgs& args, uint64_t memory_generation) const {
  // tensor_count_ > kMaxTensors: nothing remembered (a caller's count equal to that
  // sentinel must not reach the memcmp below, which would read past both arrays).
  if (tensor_count_ > kMaxTensors || args.tensor_count != tensor_count_ ||
      args.scalar_count != scalar_count_ || memory_generation != generation_) {
    return false;
  }
  // All tensors in one compare (both arrays are contiguous): one call, vector loads.
  return std::memcmp(args.tensors, tensors_, sizeof(ChipTensor) * tensor_count_) == 0;
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
