// simpler runtime host — checking a call's arguments against a callable's signature.
#pragma once

#include <cstdint>
#include <span>

#include "simpler/abi/chip_types.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt::host {

// Throws AbiError INVALID_ARGUMENT naming the position when: the counts differ from the
// signature, signature position i is a tensor direction but i >= tensor_count (or a
// scalar but i < tensor_count), a tensor is malformed, a tensor's address space is
// unknown, or a DEVICE tensor does not lie inside one live allocation of `device`.
// `allow_host` false (kernel mode) refuses HOST-space tensors. A non-empty `typed`
// signature also checks each tensor's dtype and rank (check_typed_args).
void check_call_args(const ChipStorageTaskArgs& args, std::span<const ArgDirection> signature,
                     int32_t device, bool allow_host, std::span<const ArgSpec> typed = {});

// Throws AbiError INVALID_ARGUMENT (naming argument `arg_index`) unless the view's bytes
// lie inside one live allocation of `device`.
void check_device_tensor(const ChipTensor& t, int32_t device, uint32_t arg_index);

}  // namespace simpler::rt::host
