#include "image_digest.h"

#include <cstring>

#include "image_format.h"
#include "task_interface/sha256.h"

namespace simpler::image {

Digest compute_digest(const uint8_t* data, size_t size, size_t digest_at) {
  static constexpr uint8_t kZeros[kDigestSize] = {};
  sha::Sha256 hash;
  hash.update(data, digest_at);
  hash.update(kZeros, kDigestSize);
  hash.update(data + digest_at + kDigestSize, size - digest_at - kDigestSize);
  return hash.finish();
}

void seal(uint8_t* data, size_t size, size_t digest_at) {
  const Digest digest = compute_digest(data, size, digest_at);
  std::memcpy(data + digest_at, digest.data(), kDigestSize);
}

bool digest_matches(const uint8_t* data, size_t size, size_t digest_at) {
  const Digest digest = compute_digest(data, size, digest_at);
  return std::memcmp(data + digest_at, digest.data(), kDigestSize) == 0;
}

}  // namespace simpler::image
