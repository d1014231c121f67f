// The flat callable image layout (internal; documented in docs/task-interface.md).
//
// Every integer is little-endian and read with explicit byte loads, so an image is
// position independent and readable at any alignment. Sections start 8-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simpler::image {

inline constexpr uint32_t kCoreMagic = 0x45524F43u;  // bytes "CORE"
inline constexpr uint32_t kChipMagic = 0x50494843u;  // bytes "CHIP"
// Version 2: headers end with a SHA-256 digest of the image (version 1 images had none).
// Version 3 (typed): after the digest, an arg_types section (and for a CoreCallable the
// core type it was compiled for). Builders write version 2 whenever the signature is
// untyped and no core type is recorded, so such images stay byte-identical; readers
// accept 2 and 3.
inline constexpr uint32_t kVersion = 2;
inline constexpr uint32_t kVersionTyped = 3;
inline constexpr uint64_t kAlign = 8;

// Fields common to both headers.
inline constexpr size_t kMagicAt = 0;      // u32
inline constexpr size_t kVersionAt = 4;    // u32
inline constexpr size_t kTotalSizeAt = 8;  // u64: the whole image, header included

// CoreCallable header: (offset, length) u64 pairs.
inline constexpr size_t kCoreSignatureAt = 16;
inline constexpr size_t kCoreBinaryAt = 32;
inline constexpr size_t kCoreDigestAt = 48;  // 32 bytes: see kDigestSize
inline constexpr size_t kCoreHeaderSize = 80;
inline constexpr size_t kCoreArgTypesAt = 80;   // v3: (offset, length) of arg_types
inline constexpr size_t kCoreCoreTypeAt = 96;   // v3: u32, kCoreTypeNone or SimplerCoreType + 1
inline constexpr size_t kCoreReservedAt = 100;  // v3: u32, must be 0
inline constexpr size_t kCoreHeaderSizeTyped = 104;

// ChipCallable header.
inline constexpr size_t kChipSignatureAt = 16;
inline constexpr size_t kChipFuncNameAt = 32;
inline constexpr size_t kChipBinaryAt = 48;
inline constexpr size_t kChipChildrenAt = 64;  // (table offset u64, child count u64)
inline constexpr size_t kChipDigestAt = 80;    // 32 bytes: see kDigestSize
inline constexpr size_t kChipHeaderSize = 112;
inline constexpr size_t kChipArgTypesAt = 112;  // v3: (offset, length) of arg_types
inline constexpr size_t kChipHeaderSizeTyped = 128;

// The digest: SHA-256 of the whole image (total_size bytes) with the digest field itself
// read as zeros. A ChipCallable's digest covers its children, each of which also carries
// its own. Checked by the reader before anything in the image is used or loaded.
inline constexpr size_t kDigestSize = 32;

// arg_types: empty, or kArgTypeSize bytes per signature entry: the dtype (a ChipDataType
// value, or kAnyDataType) and the rank (0 = any; 1..5 for tensors; 0 for scalars).
inline constexpr size_t kArgTypeSize = 2;
inline constexpr uint8_t kAnyDataType = 0xFF;
inline constexpr uint32_t kCoreTypeNone = 0;

// One child-table entry.
inline constexpr size_t kEntryFuncIdAt = 0;    // i32
inline constexpr size_t kEntryReservedAt = 4;  // u32, must be 0
inline constexpr size_t kEntryImageAt = 8;     // (offset, length) u64 pair: a CoreCallable image
inline constexpr size_t kEntrySize = 24;

inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t load_u64(const uint8_t* p) {
  return static_cast<uint64_t>(load_u32(p)) | static_cast<uint64_t>(load_u32(p + 4)) << 32;
}
inline void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_u64(uint8_t* p, uint64_t v) {
  store_u32(p, static_cast<uint32_t>(v));
  store_u32(p + 4, static_cast<uint32_t>(v >> 32));
}
inline uint64_t align_up(uint64_t v) { return (v + kAlign - 1) & ~(kAlign - 1); }

}  // namespace simpler::image
