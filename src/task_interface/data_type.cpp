// DataType / ArgDirection tables: element sizes and names.
#include <array>
#include <string>

#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

struct DataTypeInfo {
  const char* name;
  size_t size;
};

// Indexed by the ChipDataType value (checked by the static_assert below).
constexpr std::array<DataTypeInfo, CHIP_DT_COUNT> kDataTypes = {{
    {"FLOAT32", 4},
    {"FLOAT16", 2},
    {"BFLOAT16", 2},
    {"INT8", 1},
    {"INT16", 2},
    {"INT32", 4},
    {"INT64", 8},
    {"UINT8", 1},
    {"UINT16", 2},
    {"UINT32", 4},
    {"UINT64", 8},
    {"BOOL", 1},
    {"FLOAT64", 8},
}};
static_assert(CHIP_DT_FLOAT64 == 12 && CHIP_DT_COUNT == 13, "kDataTypes is indexed by value");

const DataTypeInfo& info_of(DataType dtype) {
  const auto raw = static_cast<uint32_t>(dtype);
  if (!is_valid_data_type(raw)) {
    throw TaskInterfaceError("dtype: " + std::to_string(raw) +
                             " is not a DataType (valid values are 0.." +
                             std::to_string(CHIP_DT_COUNT - 1) + ")");
  }
  return kDataTypes[raw];
}

}  // namespace

bool is_valid_data_type(uint32_t raw) { return raw < CHIP_DT_COUNT; }

size_t element_size(DataType dtype) { return info_of(dtype).size; }

const char* data_type_name(DataType dtype) { return info_of(dtype).name; }

std::optional<DataType> data_type_from_name(std::string_view name) {
  for (uint32_t i = 0; i < kDataTypes.size(); ++i) {
    if (name == kDataTypes[i].name) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

const char* arg_direction_name(ArgDirection dir) {
  switch (dir) {
    case ArgDirection::SCALAR:
      return "SCALAR";
    case ArgDirection::IN:
      return "IN";
    case ArgDirection::OUT:
      return "OUT";
    case ArgDirection::INOUT:
      return "INOUT";
  }
  throw TaskInterfaceError("direction: " + std::to_string(static_cast<uint32_t>(dir)) +
                           " is not an ArgDirection (SCALAR=0, IN=1, OUT=2, INOUT=3)");
}

}  // namespace simpler
