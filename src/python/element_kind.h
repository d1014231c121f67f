// Numpy dtypes, buffer-protocol formats and DLPack types all describe an element as a kind
// plus a width; this maps that pair to a DataType once, for all three.
#pragma once

#include <cstddef>
#include <optional>

#include "simpler/task/task_interface.h"

namespace simpler::python {

enum class ElementKind { kFloat, kBfloat, kInt, kUInt, kBool };

// The DataType of a `bytes`-wide element of `kind`, or nullopt when the chip has none.
inline std::optional<DataType> data_type_of_kind(ElementKind kind, size_t bytes) {
  auto by_width = [bytes](std::optional<DataType> w1, std::optional<DataType> w2,
                          std::optional<DataType> w4,
                          std::optional<DataType> w8) -> std::optional<DataType> {
    switch (bytes) {
      case 1:
        return w1;
      case 2:
        return w2;
      case 4:
        return w4;
      case 8:
        return w8;
      default:
        return std::nullopt;
    }
  };
  switch (kind) {
    case ElementKind::kFloat:
      return by_width(std::nullopt, DataType::FLOAT16, DataType::FLOAT32, DataType::FLOAT64);
    case ElementKind::kBfloat:
      return by_width(std::nullopt, DataType::BFLOAT16, std::nullopt, std::nullopt);
    case ElementKind::kInt:
      return by_width(DataType::INT8, DataType::INT16, DataType::INT32, DataType::INT64);
    case ElementKind::kUInt:
      return by_width(DataType::UINT8, DataType::UINT16, DataType::UINT32, DataType::UINT64);
    case ElementKind::kBool:
      return by_width(DataType::BOOL, std::nullopt, std::nullopt, std::nullopt);
  }
  return std::nullopt;
}

}  // namespace simpler::python
