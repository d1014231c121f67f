// The image reader never reads out of bounds: every truncation of a valid image and
// many random corruptions are parsed from exact-size heap copies (ASan flags any
// read past them), and whatever the reader accepts only points inside the image.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "raw_image.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

std::vector<uint8_t> sample_chip_image() {
  using D = ArgDirection;
  const std::vector<uint8_t> k1 = {'k', '1', 0, 1, 2, 3, 4};
  const std::vector<uint8_t> k2 = {'k', 'e', 'r', 'n', 'e', 'l', '2', 9, 9, 9, 9};
  const std::vector<uint8_t> orch = {'o', 'r', 'c', 'h', 0x7F, 'E', 'L', 'F'};
  const auto c1 = CoreCallable::build(std::vector<D>{D::IN, D::OUT}, k1);
  const auto c2 = CoreCallable::build(std::vector<D>{D::INOUT, D::SCALAR}, k2);
  const auto chip = ChipCallable::build(std::vector<D>{D::IN, D::OUT, D::SCALAR}, "orch_main", orch,
                                        {{4, c1}, {17, c2}});
  return {chip.bytes().begin(), chip.bytes().end()};
}

bool inside(std::span<const uint8_t> part, const uint8_t* base, size_t size) {
  return part.empty() || (part.data() >= base && part.data() + part.size() <= base + size);
}

// Parses a private exact-size copy. Returns whether it was accepted; checks the views.
bool parse_copy(const std::vector<uint8_t>& img, size_t size) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  std::copy(img.begin(), img.begin() + static_cast<ptrdiff_t>(size), copy.get());
  ChipCallableView v;
  std::string error;
  const bool ok = parse_chip_callable_image(copy.get(), size, &v, &error);
  if (!ok) {
    EXPECT_FALSE(error.empty());
    return false;
  }
  const auto name =
      std::span(reinterpret_cast<const uint8_t*>(v.func_name.data()), v.func_name.size());
  EXPECT_TRUE(inside(v.signature, copy.get(), size));
  EXPECT_TRUE(inside(name, copy.get(), size));
  EXPECT_TRUE(inside(v.binary, copy.get(), size));
  for (const auto& c : v.children) {
    EXPECT_TRUE(inside(c.callable.signature, copy.get(), size));
    EXPECT_TRUE(inside(c.callable.binary, copy.get(), size));
    EXPECT_TRUE(inside(c.image, copy.get(), size));
    EXPECT_GE(c.func_id, 0);
    EXPECT_LE(c.func_id, CHIP_MAX_FUNC_ID);
  }
  return true;
}

TEST(CallableImageFuzz, EveryTruncationIsRefused) {
  const auto img = sample_chip_image();
  ASSERT_TRUE(parse_copy(img, img.size()));
  for (size_t n = 0; n < img.size(); ++n) {
    EXPECT_FALSE(parse_copy(img, n)) << "accepted a truncation to " << n << " bytes";
  }
}

TEST(CallableImageFuzz, EveryTruncationOfAChildIsRefused) {
  const auto img = sample_chip_image();
  ChipCallableView v;
  ASSERT_TRUE(parse_chip_callable_image(img.data(), img.size(), &v, nullptr));
  const auto child = v.children[1].callable;
  const auto core =
      CoreCallable::build(std::vector<ArgDirection>{ArgDirection::IN},
                          std::vector<uint8_t>(child.binary.begin(), child.binary.end()));
  const std::vector<uint8_t> bytes(core.bytes().begin(), core.bytes().end());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[n == 0 ? 1 : n]);
    std::copy(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n), copy.get());
    std::string error;
    EXPECT_FALSE(parse_core_callable_image(copy.get(), n, nullptr, &error)) << n;
  }
}

TEST(CallableImageFuzz, RandomByteFlipsNeverReadOutOfBounds) {
  const auto img = sample_chip_image();
  std::mt19937_64 rng(20240601);  // fixed seed: deterministic
  size_t accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    auto mutated = img;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Half of the flips target the headers and the child table, where they matter most.
      const size_t hot = testing::kChipHeader + 16 + 2 * testing::kEntrySize;
      const size_t at =
          (rng() & 1) ? rng() % std::min(hot, mutated.size()) : rng() % mutated.size();
      mutated[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    if (parse_copy(mutated, mutated.size())) ++accepted;
  }
  // Every flip is refused: structural ones by the bounds checks, the rest by the digest.
  EXPECT_EQ(accepted, 0u);
}

TEST(CallableImageFuzz, RandomHeaderWordsNeverReadOutOfBounds) {
  const auto img = sample_chip_image();
  std::mt19937_64 rng(7);
  const uint64_t interesting[] = {0,
                                  8,
                                  80,
                                  img.size(),
                                  img.size() - 8,
                                  img.size() + 8,
                                  ~uint64_t{0},
                                  ~uint64_t{0} - 7,
                                  uint64_t{1} << 63};
  for (int round = 0; round < 20000; ++round) {
    auto mutated = img;
    const size_t word = 1 + rng() % 9;  // 64-bit header words after magic/version
    const uint64_t value = (rng() & 1) ? interesting[rng() % std::size(interesting)] : rng();
    testing::put64(mutated, word * 8, value);
    parse_copy(mutated, mutated.size());
  }
}

}  // namespace
}  // namespace simpler
