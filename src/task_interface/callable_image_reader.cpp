// Bounds-checked reader of CoreCallable / ChipCallable images.
//
// Order of checks: header fits, magic, version, total_size == size, every section lies
// aligned inside [header, size) without overlapping another, the contents, and last the
// digest over the whole image (so a structurally valid image with any flipped bit is
// still refused before a byte of it is used or loaded). Every load goes through `Image`,
// which refuses any byte outside [data, data + size).
#include <algorithm>
#include <bitset>
#include <cstdio>
#include <string>
#include <vector>

#include "callable_rules.h"
#include "image_digest.h"
#include "image_format.h"
#include "simpler/task/task_interface.h"
#include "support/counted.h"

namespace simpler {
namespace {

struct Image {
  const uint8_t* data;
  uint64_t size;
  // Callers only read header/table fields already proven to lie inside the image.
  uint32_t u32(uint64_t at) const { return at + 4 <= size ? image::load_u32(data + at) : 0; }
  uint64_t u64(uint64_t at) const { return at + 8 <= size ? image::load_u64(data + at) : 0; }
};

struct Section {
  std::string name;
  uint64_t offset;
  uint64_t length;
};

Section read_section(const Image& img, std::string name, size_t at) {
  return Section{std::move(name), img.u64(at), img.u64(at + 8)};
}

std::string check_section(const Section& s, uint64_t header_size, uint64_t size) {
  const std::string where = s.name + ": offset " + std::to_string(s.offset);
  if (s.offset % image::kAlign != 0) return where + " is not 8-byte aligned";
  if (s.offset < header_size) return where + " lies inside the header";
  if (s.offset > size) {
    return where + " is past the end of the image (" + support::counted(size, "byte") + ")";
  }
  if (s.length > size - s.offset) {
    return s.name + ": length " + std::to_string(s.length) + " at offset " +
           std::to_string(s.offset) + " runs past the end of the image (" +
           support::counted(size, "byte") + ")";
  }
  return {};
}

// Sections must already be in bounds; empty sections occupy no bytes.
std::string check_disjoint(std::vector<Section> sections) {
  std::erase_if(sections, [](const Section& s) { return s.length == 0; });
  std::sort(sections.begin(), sections.end(),
            [](const Section& a, const Section& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < sections.size(); ++i) {
    const Section& prev = sections[i - 1];
    if (prev.offset + prev.length > sections[i].offset) {
      return prev.name + " and " + sections[i].name + ": sections overlap";
    }
  }
  return {};
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

// Size, magic, version, total_size. `kind` names the expected image for messages;
// `header_plain`/`header_typed` are the header sizes of versions 2 and 3. On success
// `*header_size` is the size of this image's header.
std::string check_header(const Image& img, uint32_t magic, size_t header_plain, size_t header_typed,
                         const char* kind, size_t* header_size) {
  if (img.data == nullptr && img.size != 0) return "image: null pointer with a nonzero size";
  auto truncated = [&](size_t needed) {
    return "truncated: " + support::counted(img.size, "byte") + ", the " + kind + " header needs " +
           std::to_string(needed);
  };
  if (img.size < image::kTotalSizeAt) return truncated(header_plain);
  const uint32_t found = img.u32(image::kMagicAt);
  if (found != magic) {
    if (found == image::kCoreMagic) return "magic: a CoreCallable image, not a ChipCallable";
    if (found == image::kChipMagic) return "magic: a ChipCallable image, not a CoreCallable";
    return "magic: " + hex(found) + " is not a " + kind + " image (expected " + hex(magic) + ")";
  }
  const uint32_t version = img.u32(image::kVersionAt);
  if (version != image::kVersion && version != image::kVersionTyped) {
    return "version: " + std::to_string(version) + " is not supported (this build reads " +
           std::to_string(image::kVersion) + " and " + std::to_string(image::kVersionTyped) + ")";
  }
  *header_size = version == image::kVersion ? header_plain : header_typed;
  if (img.size < *header_size) return truncated(*header_size);
  const uint64_t total = img.u64(image::kTotalSizeAt);
  if (total != img.size) {
    return "total_size: the header says " + support::counted(total, "byte") + " but the image is " +
           std::to_string(img.size) + " (truncated or trailing bytes)";
  }
  return {};
}

std::span<const uint8_t> bytes_of(const Image& img, const Section& s) {
  return {img.data + s.offset, static_cast<size_t>(s.length)};
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

std::string check_digest(const Image& img, size_t digest_at) {
  if (image::digest_matches(img.data, img.size, digest_at)) return {};
  return "digest: the SHA-256 in the header does not match the image's " +
         std::to_string(img.size) +
         " bytes (corrupted in storage or transit, or edited after it was built); rebuild it "
         "with CoreCallable.build / ChipCallable.build";
}

}  // namespace

bool parse_core_callable_image(const void* data, size_t size, CoreCallableView* out,
                               std::string* error) {
  const Image img{static_cast<const uint8_t*>(data), size};
  size_t header = 0;
  if (auto e = check_header(img, image::kCoreMagic, image::kCoreHeaderSize,
                            image::kCoreHeaderSizeTyped, "CoreCallable", &header);
      !e.empty()) {
    return fail(error, e);
  }
  const bool typed = header == image::kCoreHeaderSizeTyped;
  const Section signature = read_section(img, "signature", image::kCoreSignatureAt);
  const Section binary = read_section(img, "binary", image::kCoreBinaryAt);
  const Section arg_types = typed ? read_section(img, "arg_types", image::kCoreArgTypesAt)
                                  : Section{"arg_types", header, 0};
  for (const Section* s : {&signature, &binary, &arg_types}) {
    if (auto e = check_section(*s, header, size); !e.empty()) return fail(error, e);
  }
  if (auto e = check_disjoint({signature, binary, arg_types}); !e.empty()) return fail(error, e);
  CoreCallableView view{bytes_of(img, signature), bytes_of(img, binary), bytes_of(img, arg_types),
                        std::nullopt};
  if (typed) {
    const uint32_t core = img.u32(image::kCoreCoreTypeAt);
    if (core > static_cast<uint32_t>(CoreType::MIX) + 1) {
      return fail(error, "core_type: " + std::to_string(core) +
                             " is not 0 (not recorded), 1 (AIC), 2 (AIV) or 3 (MIX)");
    }
    if (core != image::kCoreTypeNone) view.core_type = static_cast<CoreType>(core - 1);
    if (img.u32(image::kCoreReservedAt) != 0) return fail(error, "reserved: must be 0");
  }
  if (auto e = detail::check_signature(view.signature); !e.empty()) return fail(error, e);
  if (auto e = detail::check_arg_types(view.signature, view.arg_types); !e.empty()) {
    return fail(error, e);
  }
  if (auto e = detail::check_binary(view.binary); !e.empty()) return fail(error, e);
  if (auto e = check_digest(img, image::kCoreDigestAt); !e.empty()) return fail(error, e);
  if (out) *out = view;
  return true;
}

bool parse_chip_callable_image(const void* data, size_t size, ChipCallableView* out,
                               std::string* error) {
  const Image img{static_cast<const uint8_t*>(data), size};
  size_t header = 0;
  if (auto e = check_header(img, image::kChipMagic, image::kChipHeaderSize,
                            image::kChipHeaderSizeTyped, "ChipCallable", &header);
      !e.empty()) {
    return fail(error, e);
  }
  const bool typed = header == image::kChipHeaderSizeTyped;
  // sections[0..3]: signature, func_name, binary, arg_types; then the table, the children.
  std::vector<Section> sections = {
      read_section(img, "signature", image::kChipSignatureAt),
      read_section(img, "func_name", image::kChipFuncNameAt),
      read_section(img, "binary", image::kChipBinaryAt),
      typed ? read_section(img, "arg_types", image::kChipArgTypesAt)
            : Section{"arg_types", header, 0},
  };
  const uint64_t table_offset = img.u64(image::kChipChildrenAt);
  const uint64_t child_count = img.u64(image::kChipChildrenAt + 8);
  if (child_count > CHIP_MAX_FUNC_ID + 1) {  // also keeps count * entry size from overflowing
    return fail(error, "children: count " + std::to_string(child_count) + " exceeds " +
                           std::to_string(CHIP_MAX_FUNC_ID + 1) + " (func ids 0.." +
                           std::to_string(CHIP_MAX_FUNC_ID) + ", each at most once)");
  }
  sections.push_back({"children", table_offset, child_count * image::kEntrySize});
  for (const Section& s : sections) {
    if (auto e = check_section(s, header, size); !e.empty()) return fail(error, e);
  }
  if (auto e = check_disjoint(sections); !e.empty()) return fail(error, e);
  // The table is in bounds: place every child image, then check that nothing overlaps
  // before trusting any entry's contents.
  struct Entry {
    int32_t func_id;
    uint32_t reserved;
  };
  std::vector<Entry> entries;
  for (uint64_t i = 0; i < child_count; ++i) {
    const uint64_t at = table_offset + i * image::kEntrySize;
    entries.push_back({static_cast<int32_t>(img.u32(at + image::kEntryFuncIdAt)),
                       img.u32(at + image::kEntryReservedAt)});
    Section child =
        read_section(img, "children[" + std::to_string(i) + "].image", at + image::kEntryImageAt);
    if (auto e = check_section(child, header, size); !e.empty()) {
      return fail(error, e);
    }
    sections.push_back(std::move(child));
  }
  if (auto e = check_disjoint(sections); !e.empty()) return fail(error, e);
  std::bitset<CHIP_MAX_FUNC_ID + 1> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string name = "children[" + std::to_string(i) + "]";
    const int32_t func_id = entries[i].func_id;
    if (auto e = detail::check_func_id(func_id); !e.empty())
      return fail(error, std::string(name).append(".").append(e));
    if (seen.test(static_cast<size_t>(func_id))) {
      return fail(error, name + ".func_id: " + std::to_string(func_id).append(" is duplicated"));
    }
    seen.set(static_cast<size_t>(func_id));
    if (entries[i].reserved != 0) return fail(error, name + ".reserved: must be 0");
  }

  ChipCallableView view;
  view.signature = bytes_of(img, sections[0]);
  const auto name_bytes = bytes_of(img, sections[1]);
  view.func_name =
      std::string_view(reinterpret_cast<const char*>(name_bytes.data()), name_bytes.size());
  view.binary = bytes_of(img, sections[2]);
  view.arg_types = bytes_of(img, sections[3]);
  if (auto e = detail::check_signature(view.signature); !e.empty()) return fail(error, e);
  if (auto e = detail::check_arg_types(view.signature, view.arg_types); !e.empty()) {
    return fail(error, e);
  }
  if (auto e = detail::check_func_name(view.func_name); !e.empty()) return fail(error, e);
  if (auto e = detail::check_binary(view.binary); !e.empty()) return fail(error, e);
  for (size_t i = 0; i < entries.size(); ++i) {
    const Section& s = sections[5 + i];
    ChipCallableView::Child child{entries[i].func_id, {}, bytes_of(img, s)};
    std::string child_error;
    if (!parse_core_callable_image(img.data + s.offset, s.length, &child.callable, &child_error)) {
      return fail(error, "children[" + std::to_string(i) + "] (func_id " +
                             std::to_string(entries[i].func_id) + "): " + child_error);
    }
    view.children.push_back(child);
  }
  std::sort(view.children.begin(), view.children.end(),
            [](const auto& a, const auto& b) { return a.func_id < b.func_id; });
  if (auto e = check_digest(img, image::kChipDigestAt); !e.empty()) return fail(error, e);
  if (out) *out = std::move(view);
  return true;
}

}  // namespace simpler
