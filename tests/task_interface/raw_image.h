// An independent writer of callable images, following the layout documented in
// docs/task-interface.md, so tests can craft images the builders would refuse to make.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "task_interface/sha256.h"

namespace simpler::testing {

// Documented header positions.
inline constexpr size_t kCoreHeader = 80;
inline constexpr size_t kChipHeader = 112;
inline constexpr size_t kCoreDigestAt = 48, kChipDigestAt = 80, kDigestSize = 32;
inline constexpr uint32_t kImageVersion = 2;
inline constexpr size_t kTotalSizeAt = 8;
inline constexpr size_t kCoreSigAt = 16, kCoreBinAt = 32;
inline constexpr size_t kChipSigAt = 16, kChipNameAt = 32, kChipBinAt = 48, kChipChildrenAt = 64;
inline constexpr size_t kEntrySize = 24;

inline void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t get64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}

// Writes the documented digest: SHA-256 of the image with the digest field read as zeros.
inline void seal(std::vector<uint8_t>& img, size_t digest_at) {
  for (size_t i = 0; i < kDigestSize; ++i) img[digest_at + i] = 0;
  sha::Sha256 hash;
  hash.update(img.data(), img.size());
  const auto digest = hash.finish();
  std::copy(digest.begin(), digest.end(), img.begin() + static_cast<ptrdiff_t>(digest_at));
}
inline void seal_core(std::vector<uint8_t>& img) { seal(img, kCoreDigestAt); }
inline void seal_chip(std::vector<uint8_t>& img) { seal(img, kChipDigestAt); }

// Appends `bytes` 8-byte aligned; writes (offset, length) at `at`. Returns the offset.
inline uint64_t append_section(std::vector<uint8_t>& img, size_t at,
                               const std::vector<uint8_t>& bytes) {
  const uint64_t offset = img.size();
  img.insert(img.end(), bytes.begin(), bytes.end());
  img.resize((img.size() + 7) & ~size_t{7}, 0);
  if (at != SIZE_MAX) {
    put64(img, at, offset);
    put64(img, at + 8, bytes.size());
  }
  return offset;
}

inline std::vector<uint8_t> raw_core(const std::vector<uint8_t>& sig,
                                     const std::vector<uint8_t>& binary) {
  std::vector<uint8_t> img(kCoreHeader, 0);
  img[0] = 'C';
  img[1] = 'O';
  img[2] = 'R';
  img[3] = 'E';
  put32(img, 4, kImageVersion);
  append_section(img, kCoreSigAt, sig);
  append_section(img, kCoreBinAt, binary);
  put64(img, kTotalSizeAt, img.size());
  seal_core(img);
  return img;
}

struct RawChild {
  int32_t func_id;
  std::vector<uint8_t> image;
  uint32_t reserved = 0;
};

inline std::vector<uint8_t> raw_chip(const std::vector<uint8_t>& sig, const std::string& name,
                                     const std::vector<uint8_t>& binary,
                                     const std::vector<RawChild>& children) {
  std::vector<uint8_t> img(kChipHeader, 0);
  img[0] = 'C';
  img[1] = 'H';
  img[2] = 'I';
  img[3] = 'P';
  put32(img, 4, kImageVersion);
  append_section(img, kChipSigAt, sig);
  append_section(img, kChipNameAt, std::vector<uint8_t>(name.begin(), name.end()));
  append_section(img, kChipBinAt, binary);
  const uint64_t table =
      append_section(img, SIZE_MAX, std::vector<uint8_t>(children.size() * kEntrySize, 0));
  put64(img, kChipChildrenAt, table);
  put64(img, kChipChildrenAt + 8, children.size());
  for (size_t i = 0; i < children.size(); ++i) {
    const uint64_t entry = table + i * kEntrySize;
    const uint64_t off = append_section(img, SIZE_MAX, children[i].image);
    put32(img, entry, static_cast<uint32_t>(children[i].func_id));
    put32(img, entry + 4, children[i].reserved);
    put64(img, entry + 8, off);
    put64(img, entry + 16, children[i].image.size());
  }
  put64(img, kTotalSizeAt, img.size());
  seal_chip(img);
  return img;
}

}  // namespace simpler::testing
