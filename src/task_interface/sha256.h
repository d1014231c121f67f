// SHA-256, internal: the callable images' digest and KernelCompiler's content-addressed
// cache keys. One wrapper for every layer over OpenSSL's libcrypto (Debian libssl-dev),
// which picks the CPU's SHA extensions itself.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of every includer

namespace simpler::sha {

class Sha256 {
 public:
  Sha256();  // throws std::bad_alloc when libcrypto cannot make a context
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // Length-prefixed, so ("ab","c") and ("a","bc") hash differently.
  void update_field(std::string_view field);
  std::array<uint8_t, 32> finish();  // the object must not be updated afterwards
  std::string finish_hex();

 private:
  struct FreeContext {
    void operator()(evp_md_ctx_st* context) const;
  };
  std::unique_ptr<evp_md_ctx_st, FreeContext> context_;
};

std::string sha256_hex(std::string_view data);

}  // namespace simpler::sha
