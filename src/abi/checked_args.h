// simpler runtime host — the tensors of a callable's latest kernel-mode launch that passed
// every argument check, so a launch with the same tensors skips the checks.
//
// check_call_args is a function of the args' counts and tensor bytes, the callable's
// signature, the context's device and the state of the device memory the tensors name.
// The first three are compared here (bitwise, whole tensors: stricter than needed, never
// laxer); the memory state by the device's memory generation (sim_device_memory_generation),
// read before the checks ran: any free, stream-ordered free or reset since changes it, and
// an allocation cannot make a checked range invalid. So a match answers exactly what the
// full check would. Owned by KernelMode, used under its mutex.
#pragma once

#include <cstdint>

#include "simpler/abi/chip_types.h"

namespace simpler::rt::host {

class CheckedArgs {
 public:
  static constexpr uint32_t kMaxTensors = 8;  // larger launches are checked every time

  // True when `args` have the counts and byte-identical tensors of the remembered launch
  // and the device memory is still at the generation its checks ran under.
  bool matches(const ChipStorageTaskArgs& args, uint64_t memory_generation) const;
  // After check_call_args accepted `args`, with the generation read before it ran.
  void remember(const ChipStorageTaskArgs& args, uint64_t memory_generation);

 private:
  uint64_t generation_ = 0;
  uint32_t tensor_count_ = UINT32_MAX;  // nothing remembered
  uint32_t scalar_count_ = 0;
  ChipTensor tensors_[kMaxTensors];
};

}  // namespace simpler::rt::host
