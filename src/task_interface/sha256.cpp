// SHA-256 through OpenSSL's EVP digest interface (the low-level SHA256_* calls are
// deprecated in OpenSSL 3).
#include "task_interface/sha256.h"

#include <openssl/evp.h>

#include <new>

namespace simpler::sha {

void Sha256::FreeContext::operator()(evp_md_ctx_st* context) const { EVP_MD_CTX_free(context); }

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  // Only an allocation can fail here: SHA-256 is in every libcrypto build.
  if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1) {
    throw std::bad_alloc();
  }
}

void Sha256::update(const void* data, size_t size) {
  if (size > 0) EVP_DigestUpdate(context_.get(), data, size);
}

void Sha256::update_field(std::string_view field) {
  uint8_t length[8];
  const uint64_t n = field.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(n >> (8 * i));
  update(length, sizeof length);
  update(field);
}

std::array<uint8_t, 32> Sha256::finish() {
  std::array<uint8_t, 32> digest{};
  unsigned int written = 0;
  EVP_DigestFinal_ex(context_.get(), digest.data(), &written);
  return digest;
}

std::string Sha256::finish_hex() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
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
