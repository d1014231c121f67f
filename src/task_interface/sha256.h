// SHA-256 (FIPS 180-4), internal: the callable images' digest and KernelCompiler's
// content-addressed cache keys. One implementation for every layer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace simpler::sha {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // Length-prefixed, so ("ab","c") and ("a","bc") hash differently.
  void update_field(std::string_view field);
  std::array<uint8_t, 32> finish();  // the object must not be updated afterwards
  std::string finish_hex();

 private:
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace simpler::sha
