// SHA-256 as specified in FIPS 180-4, section 6.2.
#include "task_interface/sha256.h"

#include "task_interface/sha256_blocks.h"

#include <algorithm>
#include <cstring>

namespace simpler::sha {
namespace {

constexpr uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

namespace blocks {

void portable(uint32_t state[8], const uint8_t* data, size_t count) {
  for (; count > 0; --count, data += 64) {
    const uint8_t* block = data;
    std::array<uint32_t, 64> w;
    for (int i = 0; i < 16; ++i) {
      w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
             (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const uint32_t ch = (e & f) ^ (~e & g);
      const uint32_t t1 = h + s1 + ch + blocks::kRoundConstants[i] + w[i];
      const uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      const uint32_t t2 = s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

}  // namespace blocks

void Sha256::update(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  total_bytes_ += size;
  if (size == 0) return;
  static const blocks::Compress compress = blocks::best();
  if (buffered_ > 0) {
    const size_t take = std::min(size, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, bytes, take);
    buffered_ += take;
    bytes += take;
    size -= take;
    if (buffered_ < buffer_.size()) return;
    compress(state_.data(), buffer_.data(), 1);
    buffered_ = 0;
  }
  // Whole blocks straight from the caller's bytes, the rest into the buffer.
  const size_t whole = size / buffer_.size();
  if (whole > 0) compress(state_.data(), bytes, whole);
  bytes += whole * buffer_.size();
  size -= whole * buffer_.size();
  if (size > 0) std::memcpy(buffer_.data(), bytes, size);
  buffered_ = size;
}

void Sha256::update_field(std::string_view field) {
  uint8_t length[8];
  const uint64_t n = field.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(n >> (8 * i));
  update(length, sizeof length);
  update(field);
}

std::array<uint8_t, 32> Sha256::finish() {
  const uint64_t bit_length = total_bytes_ * 8;
  const uint8_t pad_start = 0x80;
  update(&pad_start, 1);
  const uint8_t zero = 0;
  while (buffered_ != 56) update(&zero, 1);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  update(length, sizeof length);
  std::array<uint8_t, 32> digest;
  for (int i = 0; i < 8; ++i) {
    digest[4 * i] = static_cast<uint8_t>(state_[i] >> 24);
    digest[4 * i + 1] = static_cast<uint8_t>(state_[i] >> 16);
    digest[4 * i + 2] = static_cast<uint8_t>(state_[i] >> 8);
    digest[4 * i + 3] = static_cast<uint8_t>(state_[i]);
  }
  return digest;
}

std::string Sha256::finish_hex() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : finish()) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 0xf];
  }
  return hex;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.finish_hex();
}

}  // namespace simpler::sha
