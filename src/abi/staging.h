// simpler runtime host — program mode's staging of HOST tensors to device memory.
//
// Views whose host byte ranges overlap share one device block (so aliasing views stay
// aliased on the chip). IN/INOUT views are copied in; OUT views are not. After a run,
// OUT/INOUT views are copied back element run by element run, so host bytes outside a
// strided view are never overwritten; IN views are never copied back.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "abi/driver.h"
#include "simpler/abi/chip_types.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt::host {

class Staging {
 public:
  // Rewrites the HOST tensors of `args` in place into DEVICE tensors over blocks
  // allocated on the current device, copying IN/INOUT data in. Throws AbiError; what was
  // allocated so far is freed by the destructor.
  void stage(ChipStorageTaskArgs& args, std::span<const ArgDirection> signature);
  // Device -> host for OUT/INOUT views. Throws AbiError on a driver failure.
  void copy_back() const;
  // Frees the blocks; on a failed free returns its status and keeps the rest.
  int release();
  uint64_t bytes() const;

 private:
  struct Output {
    ChipTensor host_view;
    uint64_t device_minus_host;  // modular offset: device address = host address + this
  };
  std::vector<DeviceAllocation> blocks_;
  std::vector<Output> outputs_;
};

}  // namespace simpler::rt::host
