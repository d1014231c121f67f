// SHA-256 against the FIPS 180-4 example vectors, incremental updates, field framing.
#include "task_interface/sha256.h"

#include <gtest/gtest.h>

#include <vector>

namespace simpler::sha {
namespace {

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  const std::string text(1000, 'x');
  Sha256 h;
  for (size_t i = 0; i < text.size(); i += 7) h.update(std::string_view(text).substr(i, 7));
  EXPECT_EQ(h.finish_hex(), sha256_hex(text));
}

TEST(Sha256, FieldsAreFramed) {
  Sha256 a, b;
  a.update_field("ab");
  a.update_field("c");
  b.update_field("a");
  b.update_field("bc");
  EXPECT_NE(a.finish_hex(), b.finish_hex());
}

// Every split of a message into updates gives the one-shot digest.
TEST(Sha256, EverySplitEqualsOneShot) {
  std::string text(300, '\0');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 7 + 1);
  const std::string want = sha256_hex(text);
  for (size_t first = 0; first <= text.size(); first += 13) {
    for (size_t second : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{130}}) {
      Sha256 h;
      const std::string_view all(text);
      const size_t a = first, b = std::min(all.size() - a, second);
      h.update(all.substr(0, a));
      h.update(all.substr(a, b));
      h.update(all.substr(a + b));
      EXPECT_EQ(h.finish_hex(), want) << first << " " << second;
    }
  }
}

}  // namespace
}  // namespace simpler::sha
