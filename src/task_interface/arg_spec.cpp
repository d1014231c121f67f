// Typed signatures: core types, ArgSpec text, and checking call arguments against them.
#include <algorithm>
#include <cctype>
#include <string>

#include "image_format.h"
#include "simpler/task/task_interface.h"

namespace simpler {

const char* core_type_name(CoreType core) {
  return core == CoreType::AIC ? "aic" : core == CoreType::AIV ? "aiv" : "mix";
}

std::optional<CoreType> core_type_from_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "aic") return CoreType::AIC;
  if (lower == "aiv") return CoreType::AIV;
  if (lower == "mix") return CoreType::MIX;
  return std::nullopt;
}

std::string arg_spec_text(const ArgSpec& spec) {
  std::string text = arg_direction_name(spec.direction);
  if (spec.dtype) text += std::string(" ") + data_type_name(*spec.dtype);
  if (spec.rank != 0) text += "[rank " + std::to_string(spec.rank) + "]";
  return text;
}

std::vector<ArgSpec> arg_specs_of(std::span<const uint8_t> signature,
                                  std::span<const uint8_t> arg_types) {
  std::vector<ArgSpec> specs;
  specs.reserve(signature.size());
  const bool typed = arg_types.size() == signature.size() * image::kArgTypeSize;
  for (size_t i = 0; i < signature.size(); ++i) {
    ArgSpec spec;
    spec.direction = static_cast<ArgDirection>(signature[i]);
    if (typed) {
      const uint8_t dtype = arg_types[i * image::kArgTypeSize];
      if (dtype != image::kAnyDataType) spec.dtype = static_cast<DataType>(dtype);
      spec.rank = arg_types[i * image::kArgTypeSize + 1];
    }
    specs.push_back(spec);
  }
  return specs;
}

std::string check_typed_args(const ChipStorageTaskArgs& args, std::span<const ArgSpec> signature,
                             int64_t* arg_index) {
  const uint32_t tensors = std::min<uint32_t>(args.tensor_count, CHIP_MAX_TENSOR_ARGS);
  for (uint32_t i = 0; i < tensors && i < signature.size(); ++i) {
    const ArgSpec& spec = signature[i];
    if (!spec.typed() || spec.direction == ArgDirection::SCALAR) continue;
    const ChipTensor& t = args.tensors[i];
    const std::string where = "argument " + std::to_string(i) + " (" +
                              arg_direction_name(spec.direction) + "): expected ";
    std::string why;
    if (spec.dtype && t.dtype != static_cast<uint32_t>(*spec.dtype)) {
      const char* given =
          is_valid_data_type(t.dtype) ? data_type_name(static_cast<DataType>(t.dtype)) : "invalid";
      why = where + "dtype " + data_type_name(*spec.dtype) + ", given " + given;
    } else if (spec.rank != 0 && t.ndims != spec.rank) {
      why = where + "rank " + std::to_string(spec.rank) + ", given a tensor of rank " +
            std::to_string(t.ndims);
    }
    if (!why.empty()) {
      if (arg_index) *arg_index = i;
      return why;
    }
  }
  return {};
}

}  // namespace simpler
