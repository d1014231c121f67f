// Content rules of callables: signatures, function names, func ids, binaries.
#include "callable_rules.h"

#include "image_format.h"
#include "simpler/abi/chip_types.h"
#include "support/counted.h"

namespace simpler::detail {

std::string check_signature(std::span<const uint8_t> directions) {
  if (directions.size() > CHIP_MAX_SIGNATURE) {
    return "signature: " + std::to_string(directions.size()) +
           " entries exceed CHIP_MAX_SIGNATURE (" + std::to_string(CHIP_MAX_SIGNATURE) + ")";
  }
  size_t tensors = 0;
  size_t scalars = 0;
  for (size_t i = 0; i < directions.size(); ++i) {
    const uint8_t dir = directions[i];
    const std::string field = "signature[" + std::to_string(i) + "]";
    if (dir > CHIP_ARG_INOUT) {
      return field + ": " + std::to_string(dir) +
             " is not an ArgDirection (SCALAR=0, IN=1, OUT=2, INOUT=3)";
    }
    if (dir == CHIP_ARG_SCALAR) {
      ++scalars;
    } else if (scalars != 0) {
      return field + ": a tensor direction after a SCALAR (tensors come first, then scalars)";
    } else {
      ++tensors;
    }
  }
  if (tensors > CHIP_MAX_TENSOR_ARGS) {
    return "signature: " + std::to_string(tensors) + " tensors exceed CHIP_MAX_TENSOR_ARGS (" +
           std::to_string(CHIP_MAX_TENSOR_ARGS) + ")";
  }
  if (scalars > CHIP_MAX_SCALAR_ARGS) {
    return "signature: " + std::to_string(scalars) + " scalars exceed CHIP_MAX_SCALAR_ARGS (" +
           std::to_string(CHIP_MAX_SCALAR_ARGS) + ")";
  }
  return {};
}

std::string check_arg_types(std::span<const uint8_t> directions,
                            std::span<const uint8_t> arg_types) {
  if (arg_types.empty()) return {};
  if (arg_types.size() != directions.size() * image::kArgTypeSize) {
    return "arg_types: " + support::counted(arg_types.size(), "byte") + ", expected " +
           std::to_string(directions.size() * image::kArgTypeSize) + " (2 per signature entry)";
  }
  for (size_t i = 0; i < directions.size(); ++i) {
    const std::string field = "signature[" + std::to_string(i) + "]";
    const uint8_t dtype = arg_types[i * image::kArgTypeSize];
    const uint8_t rank = arg_types[i * image::kArgTypeSize + 1];
    if (dtype != image::kAnyDataType && dtype >= CHIP_DT_COUNT) {
      return field + ".dtype: " + std::to_string(dtype) + " is not a DataType";
    }
    if (directions[i] == CHIP_ARG_SCALAR && rank != 0) {
      return field + ".rank: " + std::to_string(rank) +
             " given for a SCALAR (scalars have no rank)";
    }
    if (rank > CHIP_TENSOR_MAX_DIMS) {
      return field + ".rank: " + std::to_string(rank) + " is out of range (0 = any, 1.." +
             std::to_string(CHIP_TENSOR_MAX_DIMS) + ")";
    }
  }
  return {};
}

std::string check_func_name(std::string_view name) {
  if (name.empty()) return "func_name: empty (name the orchestration entry symbol)";
  if (name.size() > CHIP_MAX_FUNC_NAME) {
    return "func_name: " + std::to_string(name.size()) + " bytes exceed CHIP_MAX_FUNC_NAME (" +
           std::to_string(CHIP_MAX_FUNC_NAME) + ")";
  }
  auto is_alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!is_alpha(c) && !(i > 0 && is_digit(c))) {
      return "func_name: not a C identifier (byte " + std::to_string(i) +
             " is not a letter, '_' or a non-leading digit)";
    }
  }
  return {};
}

std::string check_func_id(int64_t func_id) {
  if (func_id < 0 || func_id > CHIP_MAX_FUNC_ID) {
    return "func_id: " + std::to_string(func_id) + " is out of range (0.." +
           std::to_string(CHIP_MAX_FUNC_ID) + ")";
  }
  return {};
}

std::string check_binary(std::span<const uint8_t> binary) {
  if (binary.empty()) return "binary: empty (a callable needs its compiled image)";
  return {};
}

}  // namespace simpler::detail
