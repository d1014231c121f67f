// ChipStorageTaskArgs packing (tensors first, then scalars) and scalar bit patterns.
#include <bit>
#include <string>

#include "simpler/task/task_interface.h"

namespace simpler {

void args_add_tensor(ChipStorageTaskArgs& args, const ChipTensor& t) {
  const std::string index = "tensors[" + std::to_string(args.tensor_count) + "]";
  if (args.scalar_count != 0) {
    throw TaskInterfaceError(index +
                             ": a tensor cannot follow a scalar (add all tensors first, "
                             "then the scalars)");
  }
  if (args.tensor_count >= CHIP_MAX_TENSOR_ARGS) {
    throw TaskInterfaceError("tensor_count: capacity of " + std::to_string(CHIP_MAX_TENSOR_ARGS) +
                             " tensors exceeded");
  }
  try {
    validate_tensor(t);
  } catch (const TaskInterfaceError& e) {
    throw TaskInterfaceError(index + "." + e.what());
  }
  args.tensors[args.tensor_count++] = t;
}

void args_add_scalar(ChipStorageTaskArgs& args, uint64_t bits) {
  if (args.scalar_count >= CHIP_MAX_SCALAR_ARGS) {
    throw TaskInterfaceError("scalar_count: capacity of " + std::to_string(CHIP_MAX_SCALAR_ARGS) +
                             " scalars exceeded");
  }
  args.scalars[args.scalar_count++] = bits;
}

uint64_t scalar_bits_from_f32(float v) { return std::bit_cast<uint32_t>(v); }
uint64_t scalar_bits_from_f64(double v) { return std::bit_cast<uint64_t>(v); }
uint64_t scalar_bits_from_i64(int64_t v) { return static_cast<uint64_t>(v); }
float scalar_bits_to_f32(uint64_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits));
}
double scalar_bits_to_f64(uint64_t bits) { return std::bit_cast<double>(bits); }

}  // namespace simpler
