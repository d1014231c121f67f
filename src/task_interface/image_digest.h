// The digest of a callable image (internal): computed by the builders, verified by the
// reader. Layout in image_format.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace simpler::image {

using Digest = std::array<uint8_t, 32>;

// SHA-256 of data[0, size) with the kDigestSize bytes at digest_at read as zeros.
// Requires digest_at + kDigestSize <= size.
Digest compute_digest(const uint8_t* data, size_t size, size_t digest_at);
// Writes compute_digest into the image's digest field.
void seal(uint8_t* data, size_t size, size_t digest_at);
// Whether the stored digest matches the content.
bool digest_matches(const uint8_t* data, size_t size, size_t digest_at);

}  // namespace simpler::image
