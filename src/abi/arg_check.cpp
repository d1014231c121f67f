#include "abi/arg_check.h"

#include <string>

#include "abi/abi_error.h"
#include "engine/tensor_shape.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::rt::host {
namespace {

bool is_tensor_direction(ArgDirection d) {
  return d == ArgDirection::IN || d == ArgDirection::OUT || d == ArgDirection::INOUT;
}

std::string position(uint32_t i) { return "argument " + std::to_string(i); }

}  // namespace

void check_device_tensor(const ChipTensor& t, int32_t device, uint32_t arg_index) {
  // The whole buffer the descriptor claims, not only the view: kernels and orchestrations
  // see buffer.size and may trust it (a 1 TiB claim over a 64-byte allocation is refused).
  if (t.buffer.size == 0) return;  // an empty buffer touches no memory
  const void* start = reinterpret_cast<const void*>(t.buffer.addr);
  int32_t owner = -1;
  int status = sim_pointer_device(start, static_cast<size_t>(t.buffer.size), &owner);
  if (status != SIMPLER_OK) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         position(arg_index) + ": DEVICE tensor buffer [" + std::to_string(t.buffer.addr) + ", +" +
             std::to_string(t.buffer.size) + ") is not inside one live device allocation (" +
             simpler_status_name(status) +
             (status == SIM_ERR_OUT_OF_RANGE ? ": it runs past the allocation's end" : "") + ")");
  }
  if (owner != device) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         position(arg_index) + ": DEVICE tensor lives on device " + std::to_string(owner) +
             ", the context uses device " + std::to_string(device));
  }
}

void check_call_args(const ChipStorageTaskArgs& args, std::span<const ArgDirection> signature,
                     int32_t device, bool allow_host, std::span<const ArgSpec> typed) {
  if (args.tensor_count > CHIP_MAX_TENSOR_ARGS || args.scalar_count > CHIP_MAX_SCALAR_ARGS) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         "args hold " + counted(args.tensor_count, "tensor") + " and " +
             counted(args.scalar_count, "scalar") + "; the capacity is " +
             std::to_string(CHIP_MAX_TENSOR_ARGS) + " and " + std::to_string(CHIP_MAX_SCALAR_ARGS));
  }
  const uint64_t given = uint64_t{args.tensor_count} + args.scalar_count;
  if (given != signature.size()) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         "the callable's signature has " + counted(signature.size(), "argument") + ", args hold " +
             counted(args.tensor_count, "tensor") + " + " + counted(args.scalar_count, "scalar"));
  }
  for (uint32_t i = 0; i < signature.size(); ++i) {
    const bool wants_tensor = is_tensor_direction(signature[i]);
    const bool is_tensor = i < args.tensor_count;
    if (wants_tensor != is_tensor) {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
           position(i) + ": the signature says " + arg_direction_name(signature[i]) +
               " but args pass a " + (is_tensor ? "tensor" : "scalar") +
               " there (tensors come first, then scalars)");
    }
  }
  if (!typed.empty()) {
    if (std::string why = check_typed_args(args, typed); !why.empty()) {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, why);
    }
  }
  for (uint32_t i = 0; i < args.tensor_count; ++i) {
    const ChipTensor& t = args.tensors[i];
    // Messages are only built on failure: this runs on the kernel-mode launch path.
    auto what = [&] { return position(i) + " (" + arg_direction_name(signature[i]) + ")"; };
    try {
      validate_tensor(t);
    } catch (const TaskInterfaceError& e) {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT, what() + ": " + e.what());
    }
    if (t.space == CHIP_SPACE_DEVICE) {
      check_device_tensor(t, device, i);
    } else if (t.space == CHIP_SPACE_HOST) {
      if (!allow_host) {
        fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
             what() +
                 ": a HOST-space tensor; kernel mode takes DEVICE tensors only (copy the data to "
                 "device memory first)");
      }
    } else {
      fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
           what() + ": unknown address space " + std::to_string(t.space));
    }
  }
}

}  // namespace simpler::rt::host
