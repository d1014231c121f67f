// CoreCallable / ChipCallable: building images, loading them from bytes, viewing them.
#include <algorithm>
#include <bitset>
#include <cstring>
#include <string>

#include "callable_rules.h"
#include "image_digest.h"
#include "image_format.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

void throw_if(const std::string& error, const char* what) {
  if (!error.empty()) throw TaskInterfaceError(std::string(what) + ": " + error);
}

std::vector<uint8_t> direction_bytes(std::span<const ArgDirection> signature) {
  std::vector<uint8_t> bytes;
  bytes.reserve(signature.size());
  for (ArgDirection d : signature) {
    const auto raw = static_cast<uint32_t>(d);
    bytes.push_back(raw > 0xFF ? 0xFF : static_cast<uint8_t>(raw));  // 0xFF: rejected below
  }
  return bytes;
}

std::vector<ArgDirection> directions_from_specs(std::span<const ArgSpec> specs) {
  std::vector<ArgDirection> out;
  out.reserve(specs.size());
  for (const ArgSpec& s : specs) out.push_back(s.direction);
  return out;
}

// Empty when no entry is typed (the image stays version 1), else 2 bytes per entry.
std::vector<uint8_t> arg_type_bytes(std::span<const ArgSpec> specs) {
  if (std::none_of(specs.begin(), specs.end(), [](const ArgSpec& s) { return s.typed(); })) {
    return {};
  }
  std::vector<uint8_t> bytes;
  bytes.reserve(specs.size() * image::kArgTypeSize);
  for (const ArgSpec& s : specs) {
    const uint32_t dtype = s.dtype ? static_cast<uint32_t>(*s.dtype) : image::kAnyDataType;
    bytes.push_back(dtype > 0xFF ? 0xFE : static_cast<uint8_t>(dtype));  // 0xFE: rejected below
    bytes.push_back(s.rank > 0xFF ? 0xFF : static_cast<uint8_t>(s.rank));
  }
  return bytes;
}

std::vector<ArgDirection> directions_of(std::span<const uint8_t> bytes) {
  std::vector<ArgDirection> out;
  out.reserve(bytes.size());
  for (uint8_t b : bytes) out.push_back(static_cast<ArgDirection>(b));
  return out;
}

// Lays out sections one after another, each 8-byte aligned, after a zeroed header.
class ImageWriter {
 public:
  explicit ImageWriter(size_t header_size) : image_(header_size, 0) {}
  // Appends a section and records its (offset, length) at header position `at`.
  void section(size_t at, std::span<const uint8_t> bytes) {
    const uint64_t offset = image_.size();
    image_.insert(image_.end(), bytes.begin(), bytes.end());
    image_.resize(image::align_up(image_.size()), 0);
    image::store_u64(image_.data() + at, offset);
    image::store_u64(image_.data() + at + 8, bytes.size());
  }
  uint64_t reserve(size_t bytes) {  // zeroed space filled in later via `at()`
    const uint64_t offset = image_.size();
    image_.resize(image::align_up(image_.size() + bytes), 0);
    return offset;
  }
  uint8_t* at(uint64_t offset) { return image_.data() + offset; }
  // Fills the common header fields, then the digest over everything.
  std::vector<uint8_t> finish(uint32_t magic, uint32_t version, size_t digest_at) {
    image::store_u32(image_.data() + image::kMagicAt, magic);
    image::store_u32(image_.data() + image::kVersionAt, version);
    image::store_u64(image_.data() + image::kTotalSizeAt, image_.size());
    image::seal(image_.data(), image_.size(), digest_at);
    return std::move(image_);
  }

 private:
  std::vector<uint8_t> image_;
};

// Both callable kinds validate through their image parser: `what` names the kind in the
// message, `hint` says what to do when the bytes are not an image.
template <class View>
View parse_or_throw(bool (*parse)(const void*, size_t, View*, std::string*),
                    std::span<const uint8_t> image, const std::string& what,
                    const std::string& hint) {
  View view{};
  std::string error;
  if (!parse(image.data(), image.size(), &view, &error)) {
    throw TaskInterfaceError(what + error + hint);
  }
  return view;
}

}  // namespace

// ---- CoreCallable ----------------------------------------------------------------------

CoreCallable CoreCallable::build(std::span<const ArgDirection> signature,
                                 std::span<const uint8_t> binary) {
  std::vector<ArgSpec> specs;
  for (ArgDirection d : signature) specs.push_back(ArgSpec{d, std::nullopt, 0});
  return build(specs, binary, std::nullopt);
}

CoreCallable CoreCallable::build(std::span<const ArgSpec> signature,
                                 std::span<const uint8_t> binary,
                                 std::optional<CoreType> core_type) {
  const std::vector<uint8_t> directions = direction_bytes(directions_from_specs(signature));
  const std::vector<uint8_t> arg_types = arg_type_bytes(signature);
  throw_if(detail::check_signature(directions), "CoreCallable.build");
  throw_if(detail::check_arg_types(directions, arg_types), "CoreCallable.build");
  throw_if(detail::check_binary(binary), "CoreCallable.build");
  if (core_type && *core_type != CoreType::AIC && *core_type != CoreType::AIV &&
      *core_type != CoreType::MIX) {
    throw TaskInterfaceError("CoreCallable.build: core_type: not AIC, AIV or MIX");
  }
  const bool typed = !arg_types.empty() || core_type.has_value();
  ImageWriter writer(typed ? image::kCoreHeaderSizeTyped : image::kCoreHeaderSize);
  writer.section(image::kCoreSignatureAt, directions);
  writer.section(image::kCoreBinaryAt, binary);
  if (typed) {
    writer.section(image::kCoreArgTypesAt, arg_types);
    const uint32_t core = core_type ? static_cast<uint32_t>(*core_type) + 1 : image::kCoreTypeNone;
    image::store_u32(writer.at(image::kCoreCoreTypeAt), core);
  }
  CoreCallable out;
  out.image_ = writer.finish(image::kCoreMagic, typed ? image::kVersionTyped : image::kVersion,
                             image::kCoreDigestAt);
  return out;
}

CoreCallable CoreCallable::from_bytes(std::span<const uint8_t> image) {
  parse_or_throw(parse_core_callable_image, image, "CoreCallable image: ", "");
  CoreCallable out;
  out.image_.assign(image.begin(), image.end());
  return out;
}

CoreCallableView CoreCallable::view() const {
  // Only an empty (default-constructed) CoreCallable fails here: images are validated.
  return parse_or_throw(parse_core_callable_image, std::span<const uint8_t>(image_),
                        "CoreCallable: ", " (use CoreCallable::build or from_bytes)");
}

std::vector<ArgDirection> CoreCallable::signature() const {
  return directions_of(view().signature);
}

std::vector<ArgSpec> CoreCallable::arg_specs() const {
  const CoreCallableView v = view();
  return arg_specs_of(v.signature, v.arg_types);
}

std::optional<CoreType> CoreCallable::core_type() const { return view().core_type; }

// ---- ChipCallable ----------------------------------------------------------------------

ChipCallable ChipCallable::build(std::span<const ArgDirection> signature,
                                 std::string_view func_name, std::span<const uint8_t> binary,
                                 const std::vector<std::pair<int32_t, CoreCallable>>& children) {
  std::vector<ArgSpec> specs;
  for (ArgDirection d : signature) specs.push_back(ArgSpec{d, std::nullopt, 0});
  return build(specs, func_name, binary, children);
}

ChipCallable ChipCallable::build(std::span<const ArgSpec> signature, std::string_view func_name,
                                 std::span<const uint8_t> binary,
                                 const std::vector<std::pair<int32_t, CoreCallable>>& children) {
  const std::vector<uint8_t> directions = direction_bytes(directions_from_specs(signature));
  const std::vector<uint8_t> arg_types = arg_type_bytes(signature);
  throw_if(detail::check_signature(directions), "ChipCallable.build");
  throw_if(detail::check_arg_types(directions, arg_types), "ChipCallable.build");
  throw_if(detail::check_func_name(func_name), "ChipCallable.build");
  throw_if(detail::check_binary(binary), "ChipCallable.build");
  if (children.size() > CHIP_MAX_FUNC_ID + 1) {
    throw TaskInterfaceError("ChipCallable.build: children: " + std::to_string(children.size()) +
                             " exceed " + std::to_string(CHIP_MAX_FUNC_ID + 1));
  }
  std::bitset<CHIP_MAX_FUNC_ID + 1> seen;
  for (size_t i = 0; i < children.size(); ++i) {
    const std::string field = "ChipCallable.build: children[" + std::to_string(i) + "]";
    const auto& [func_id, callable] = children[i];
    throw_if(detail::check_func_id(func_id), field.c_str());
    if (seen.test(static_cast<size_t>(func_id))) {
      throw TaskInterfaceError(field + ".func_id: " + std::to_string(func_id) + " is duplicated");
    }
    seen.set(static_cast<size_t>(func_id));
    if (callable.bytes().empty()) {
      throw TaskInterfaceError(field + ": the CoreCallable is empty (build it first)");
    }
  }
  // The table is written in func_id order so equal inputs give byte-identical images.
  std::vector<const std::pair<int32_t, CoreCallable>*> sorted;
  sorted.reserve(children.size());
  for (const auto& child : children) sorted.push_back(&child);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });

  const bool typed = !arg_types.empty();
  ImageWriter writer(typed ? image::kChipHeaderSizeTyped : image::kChipHeaderSize);
  writer.section(image::kChipSignatureAt, directions);
  if (typed) writer.section(image::kChipArgTypesAt, arg_types);
  writer.section(image::kChipFuncNameAt,
                 std::span(reinterpret_cast<const uint8_t*>(func_name.data()), func_name.size()));
  writer.section(image::kChipBinaryAt, binary);
  const uint64_t table = writer.reserve(sorted.size() * image::kEntrySize);
  image::store_u64(writer.at(image::kChipChildrenAt), table);
  image::store_u64(writer.at(image::kChipChildrenAt + 8), sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::span<const uint8_t> child = sorted[i]->second.bytes();
    const uint64_t offset = writer.reserve(child.size());
    std::memcpy(writer.at(offset), child.data(), child.size());
    uint8_t* entry = writer.at(table + i * image::kEntrySize);
    image::store_u32(entry + image::kEntryFuncIdAt, static_cast<uint32_t>(sorted[i]->first));
    image::store_u64(entry + image::kEntryImageAt, offset);
    image::store_u64(entry + image::kEntryImageAt + 8, child.size());
  }
  ChipCallable out;
  out.image_ = writer.finish(image::kChipMagic, typed ? image::kVersionTyped : image::kVersion,
                             image::kChipDigestAt);
  return out;
}

ChipCallable ChipCallable::from_bytes(std::span<const uint8_t> image) {
  parse_or_throw(parse_chip_callable_image, image, "ChipCallable image: ", "");
  ChipCallable out;
  out.image_.assign(image.begin(), image.end());
  return out;
}

ChipCallableView ChipCallable::view() const {
  return parse_or_throw(parse_chip_callable_image, std::span<const uint8_t>(image_),
                        "ChipCallable: ", " (use ChipCallable::build or from_bytes)");
}

std::vector<ArgDirection> ChipCallable::signature() const {
  return directions_of(view().signature);
}

std::vector<ArgSpec> ChipCallable::arg_specs() const {
  const ChipCallableView v = view();
  return arg_specs_of(v.signature, v.arg_types);
}

std::string ChipCallable::func_name() const { return std::string(view().func_name); }

}  // namespace simpler
