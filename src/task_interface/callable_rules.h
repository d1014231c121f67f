// Content rules shared by the callable builders and the image reader (internal).
// Each returns "" when the value is acceptable, else the reason naming the field.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace simpler::detail {

// At most CHIP_MAX_SIGNATURE entries, each an ArgDirection; tensors (IN/OUT/INOUT) come
// before scalars, at most CHIP_MAX_TENSOR_ARGS / CHIP_MAX_SCALAR_ARGS of each, exactly
// the order and capacity ChipStorageTaskArgs can carry.
std::string check_signature(std::span<const uint8_t> directions);
// The arg_types section against its signature: empty, or 2 bytes per entry (a dtype or
// 0xFF, a rank 0..5; scalars have rank 0).
std::string check_arg_types(std::span<const uint8_t> directions,
                            std::span<const uint8_t> arg_types);
// Non-empty, at most CHIP_MAX_FUNC_NAME bytes, a C identifier (it is a dlsym name).
std::string check_func_name(std::string_view name);
// 0..CHIP_MAX_FUNC_ID.
std::string check_func_id(int64_t func_id);
// The kernel or orchestration binary: non-empty.
std::string check_binary(std::span<const uint8_t> binary);

}  // namespace simpler::detail
