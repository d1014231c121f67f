// CoreCallable / ChipCallable: building, round trips, accessors and refused inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "expect_error.h"
#include "raw_image.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

using testing::get64;
using testing::raw_chip;
using testing::raw_core;

using Sig = std::vector<ArgDirection>;
constexpr auto IN = ArgDirection::IN;
constexpr auto OUT = ArgDirection::OUT;
constexpr auto INOUT = ArgDirection::INOUT;
constexpr auto SCALAR = ArgDirection::SCALAR;

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string str(std::span<const uint8_t> s) { return {s.begin(), s.end()}; }

bool inside(std::span<const uint8_t> part, std::span<const uint8_t> whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

TEST(CoreCallable, BuildLaysOutAnAlignedImage) {
  const auto c = CoreCallable::build(Sig{IN, OUT, SCALAR}, bytes("kernel-bytes"));
  const auto img = c.bytes();
  ASSERT_GE(img.size(), testing::kCoreHeader);
  EXPECT_EQ(str(img.first(4)), "CORE");
  EXPECT_EQ(img[4], 2);  // version
  EXPECT_EQ(img.size() % 8, 0u);
  const std::vector<uint8_t> copy(img.begin(), img.end());
  EXPECT_EQ(get64(copy, testing::kTotalSizeAt), img.size());
  EXPECT_EQ(get64(copy, testing::kCoreSigAt) % 8, 0u);
  EXPECT_EQ(get64(copy, testing::kCoreBinAt) % 8, 0u);
  EXPECT_EQ(get64(copy, testing::kCoreSigAt + 8), 3u);
  EXPECT_EQ(get64(copy, testing::kCoreBinAt + 8), 12u);

  const CoreCallableView v = c.view();
  EXPECT_EQ(str(v.binary), "kernel-bytes");
  EXPECT_EQ(v.signature.size(), 3u);
  EXPECT_TRUE(inside(v.binary, img));
  EXPECT_EQ(c.signature(), (Sig{IN, OUT, SCALAR}));
}

TEST(CoreCallable, FromBytesRoundTripsAndIsPositionIndependent) {
  const auto c = CoreCallable::build(Sig{INOUT}, bytes("abc"));
  // Copy to an odd address: the reader must not depend on alignment or location.
  std::vector<uint8_t> shifted(c.bytes().size() + 1);
  std::copy(c.bytes().begin(), c.bytes().end(), shifted.begin() + 1);
  CoreCallableView v;
  std::string error;
  ASSERT_TRUE(parse_core_callable_image(shifted.data() + 1, c.bytes().size(), &v, &error)) << error;
  EXPECT_EQ(str(v.binary), "abc");
  const auto back = CoreCallable::from_bytes({shifted.data() + 1, c.bytes().size()});
  EXPECT_TRUE(
      std::equal(back.bytes().begin(), back.bytes().end(), c.bytes().begin(), c.bytes().end()));
  EXPECT_EQ(back.signature(), Sig{INOUT});
}

TEST(CoreCallable, BuildRefusesBadInput) {
  EXPECT_TASK_ERROR(CoreCallable::build(Sig{IN}, {}), "binary");
  EXPECT_TASK_ERROR(CoreCallable::build(Sig(CHIP_MAX_SIGNATURE + 1, SCALAR), bytes("b")),
                    "signature");
  EXPECT_TASK_ERROR(CoreCallable::build(Sig{IN, static_cast<ArgDirection>(4)}, bytes("b")),
                    "signature[1]");
  EXPECT_TASK_ERROR(CoreCallable::build(Sig{IN, SCALAR, OUT}, bytes("b")), "signature[2]");
  EXPECT_TASK_ERROR(CoreCallable::build(Sig(CHIP_MAX_TENSOR_ARGS + 1, IN), bytes("b")),
                    "CHIP_MAX_TENSOR_ARGS");
  Sig many(CHIP_MAX_TENSOR_ARGS, IN);
  many.insert(many.end(), CHIP_MAX_SCALAR_ARGS, SCALAR);
  EXPECT_NO_THROW(CoreCallable::build(many, bytes("b")));  // exactly at capacity
}

TEST(CoreCallable, EmptyObjectRefusesToView) {
  const CoreCallable empty;
  EXPECT_TRUE(empty.bytes().empty());
  EXPECT_TASK_ERROR(empty.view(), "truncated");
}

TEST(ChipCallable, BuildRoundTripWithChildrenSortedByFuncId) {
  const auto k5 = CoreCallable::build(Sig{IN, OUT}, bytes("kernel five"));
  const auto k0 = CoreCallable::build(Sig{INOUT, SCALAR}, bytes("k0"));
  const auto k63 = CoreCallable::build(Sig{}, bytes("last"));
  const auto chip = ChipCallable::build(Sig{IN, OUT, SCALAR}, "orch_entry", bytes("orch-so"),
                                        {{5, k5}, {63, k63}, {0, k0}});
  EXPECT_EQ(str(chip.bytes().first(4)), "CHIP");
  EXPECT_EQ(chip.bytes().size() % 8, 0u);
  EXPECT_EQ(chip.func_name(), "orch_entry");
  EXPECT_EQ(chip.signature(), (Sig{IN, OUT, SCALAR}));

  const ChipCallableView v = chip.view();
  EXPECT_EQ(str(v.binary), "orch-so");
  ASSERT_EQ(v.children.size(), 3u);
  EXPECT_EQ(v.children[0].func_id, 0);
  EXPECT_EQ(v.children[1].func_id, 5);
  EXPECT_EQ(v.children[2].func_id, 63);
  EXPECT_EQ(str(v.children[0].callable.binary), "k0");
  EXPECT_EQ(str(v.children[1].callable.binary), "kernel five");
  EXPECT_EQ(v.children[1].callable.signature.size(), 2u);
  EXPECT_TRUE(std::equal(v.children[1].image.begin(), v.children[1].image.end(), k5.bytes().begin(),
                         k5.bytes().end()));
  for (const auto& child : v.children) {
    EXPECT_TRUE(inside(child.callable.binary, chip.bytes()));
    EXPECT_TRUE(inside(child.callable.signature, chip.bytes()));
  }

  // Input order does not change the image.
  const auto again = ChipCallable::build(Sig{IN, OUT, SCALAR}, "orch_entry", bytes("orch-so"),
                                         {{0, k0}, {5, k5}, {63, k63}});
  EXPECT_TRUE(std::equal(again.bytes().begin(), again.bytes().end(), chip.bytes().begin(),
                         chip.bytes().end()));

  const auto loaded = ChipCallable::from_bytes(chip.bytes());
  EXPECT_EQ(loaded.func_name(), "orch_entry");
  EXPECT_EQ(loaded.view().children.size(), 3u);
}

TEST(ChipCallable, NoChildrenIsValid) {
  const auto chip = ChipCallable::build(Sig{}, "f", bytes("x"), {});
  EXPECT_TRUE(chip.view().children.empty());
}

TEST(ChipCallable, BuildRefusesBadInput) {
  const auto k = CoreCallable::build(Sig{IN}, bytes("k"));
  const auto bin = bytes("orch");
  EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, "", bin, {}), "func_name");
  EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, std::string(CHIP_MAX_FUNC_NAME + 1, 'a'), bin, {}),
                    "func_name");
  EXPECT_NO_THROW(ChipCallable::build(Sig{}, std::string(CHIP_MAX_FUNC_NAME, 'a'), bin, {}));
  for (const char* bad : {"1abc", "a-b", "a b", "entry()", "na\xc3\xafve"}) {
    EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, bad, bin, {}), "func_name");
  }
  EXPECT_NO_THROW(ChipCallable::build(Sig{}, "_entry_2", bin, {}));
  EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, "f", {}, {}), "binary");
  EXPECT_TASK_ERROR(ChipCallable::build(Sig(CHIP_MAX_SIGNATURE + 1, SCALAR), "f", bin, {}),
                    "signature");
  EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, "f", bin, {{-1, k}}), "func_id");
  EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, "f", bin, {{CHIP_MAX_FUNC_ID + 1, k}}), "func_id");
  EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, "f", bin, {{3, k}, {4, k}, {3, k}}),
                    "children[2].func_id");
  EXPECT_TASK_ERROR(ChipCallable::build(Sig{}, "f", bin, {{3, CoreCallable{}}}), "children[0]");
}

// ---- reader: crafted images ------------------------------------------------------------

std::string core_error(const std::vector<uint8_t>& img) {
  std::string error;
  CoreCallableView v;
  EXPECT_FALSE(parse_core_callable_image(img.data(), img.size(), &v, &error));
  return error;
}

std::string chip_error(const std::vector<uint8_t>& img) {
  std::string error;
  ChipCallableView v;
  EXPECT_FALSE(parse_chip_callable_image(img.data(), img.size(), &v, &error));
  return error;
}

#define EXPECT_NAMES(error, field)                  \
  EXPECT_NE((error).find(field), std::string::npos) \
      << "'" << (error) << "' lacks '" << (field) << "'"

TEST(CallableImage, IndependentWriterMatchesTheBuilder) {
  const auto core = CoreCallable::build(Sig{IN, SCALAR}, bytes("bin"));
  const auto raw = raw_core({1, 0}, bytes("bin"));
  EXPECT_TRUE(std::equal(raw.begin(), raw.end(), core.bytes().begin(), core.bytes().end()));
  const auto chip = ChipCallable::build(Sig{OUT}, "f", bytes("o"), {{7, core}});
  const auto raw_c = raw_chip({2}, "f", bytes("o"), {{7, raw}});
  EXPECT_TRUE(std::equal(raw_c.begin(), raw_c.end(), chip.bytes().begin(), chip.bytes().end()));
}

TEST(CallableImage, HeaderErrors) {
  const auto good = raw_core({1}, bytes("bin"));
  EXPECT_NAMES(core_error({good.begin(), good.begin() + 47}), "truncated");
  EXPECT_NAMES(core_error({}), "truncated");
  std::string error;
  EXPECT_FALSE(parse_core_callable_image(nullptr, 64, nullptr, &error));
  EXPECT_NAMES(error, "null");

  auto img = good;
  img[0] = 'X';
  EXPECT_NAMES(core_error(img), "magic");
  img = good;
  testing::put32(img, 4, 1);  // version 1 images had no digest
  EXPECT_NAMES(core_error(img), "version");
  img = good;
  testing::put32(img, 4, 4);  // 2 and 3 (typed) exist
  EXPECT_NAMES(core_error(img), "version");

  // total_size must equal the byte count: a trailing byte or a short buffer is refused.
  img = good;
  img.push_back(0);
  EXPECT_NAMES(core_error(img), "total_size");
  img = good;
  testing::put64(img, testing::kTotalSizeAt, good.size() + 8);
  EXPECT_NAMES(core_error(img), "total_size");

  // A Core image is not a Chip image and vice versa.
  EXPECT_NAMES(chip_error(raw_core({1}, bytes("bin"))), "magic");
  const auto chip = raw_chip({}, "f", bytes("b"), {});
  img.assign(chip.begin(), chip.end());
  EXPECT_NAMES(core_error(img), "magic");
}

TEST(CallableImage, SectionErrors) {
  const auto good = raw_core({1}, bytes("binary"));
  auto img = good;
  testing::put64(img, testing::kCoreBinAt + 8, 4096);  // length past the end
  EXPECT_NAMES(core_error(img), "binary: length");

  img = good;
  testing::put64(img, testing::kCoreBinAt, ~uint64_t{0} - 7);  // offset + length overflows
  EXPECT_NAMES(core_error(img), "binary: offset");

  img = good;
  testing::put64(img, testing::kCoreBinAt, good.size() - 8);
  testing::put64(img, testing::kCoreBinAt + 8, ~uint64_t{0});  // length overflows
  EXPECT_NAMES(core_error(img), "binary: length");

  img = good;
  testing::put64(img, testing::kCoreBinAt, get64(good, testing::kCoreBinAt) + 1);
  EXPECT_NAMES(core_error(img), "aligned");

  img = good;
  testing::put64(img, testing::kCoreSigAt, 8);
  EXPECT_NAMES(core_error(img), "header");

  img = good;  // both sections at the same place
  testing::put64(img, testing::kCoreBinAt, get64(good, testing::kCoreSigAt));
  EXPECT_NAMES(core_error(img), "overlap");

  img = good;
  testing::put64(img, testing::kCoreBinAt + 8, 0);
  EXPECT_NAMES(core_error(img), "binary: empty");
}

TEST(CallableImage, ContentErrors) {
  EXPECT_NAMES(core_error(raw_core(std::vector<uint8_t>(CHIP_MAX_SIGNATURE + 1, 0), bytes("b"))),
               "CHIP_MAX_SIGNATURE");
  EXPECT_NAMES(core_error(raw_core({1, 4}, bytes("b"))), "signature[1]");
  EXPECT_NAMES(core_error(raw_core({0, 1}, bytes("b"))), "signature[1]");
  EXPECT_NAMES(chip_error(raw_chip({9}, "f", bytes("b"), {})), "signature[0]");
  EXPECT_NAMES(chip_error(raw_chip({}, "", bytes("b"), {})), "func_name");
  EXPECT_NAMES(chip_error(raw_chip({}, std::string(CHIP_MAX_FUNC_NAME + 1, 'f'), bytes("b"), {})),
               "func_name");
  EXPECT_NAMES(chip_error(raw_chip({}, "9lives", bytes("b"), {})), "func_name");
  EXPECT_NAMES(chip_error(raw_chip({}, std::string("a\0b", 3), bytes("b"), {})), "func_name");
  EXPECT_NAMES(chip_error(raw_chip({}, "f", {}, {})), "binary");
}

TEST(CallableImage, ChildTableErrors) {
  const auto k = raw_core({1}, bytes("kernel"));
  EXPECT_NAMES(chip_error(raw_chip({}, "f", bytes("b"), {{64, k}})), "children[0].func_id");
  EXPECT_NAMES(chip_error(raw_chip({}, "f", bytes("b"), {{-5, k}})), "children[0].func_id");
  EXPECT_NAMES(chip_error(raw_chip({}, "f", bytes("b"), {{1, k}, {2, k}, {1, k}})),
               "children[2].func_id: 1 is duplicated");
  EXPECT_NAMES(chip_error(raw_chip({}, "f", bytes("b"), {{1, k, 7}})), "children[0].reserved");

  auto bad_child = k;
  bad_child[1] = '!';
  EXPECT_NAMES(chip_error(raw_chip({}, "f", bytes("b"), {{3, k}, {4, bad_child}})),
               "children[1] (func_id 4): magic");

  auto img = raw_chip({}, "f", bytes("b"), {{1, k}});
  testing::put64(img, testing::kChipChildrenAt + 8, uint64_t{1} << 62);  // absurd count
  EXPECT_NAMES(chip_error(img), "children: count");
  img = raw_chip({}, "f", bytes("b"), {{1, k}});
  testing::put64(img, testing::kChipChildrenAt + 8, 2);  // table runs into the child image
  EXPECT_NAMES(chip_error(img), "children[1]");
  img = raw_chip({}, "f", bytes("b"), {{1, k}});
  testing::put64(img, testing::kChipChildrenAt, get64(img, testing::kChipBinAt));
  EXPECT_NAMES(chip_error(img), "binary and children: sections overlap");

  // A child image pointing at the orchestration binary overlaps it.
  img = raw_chip({}, "f", bytes("b"), {{1, k}});
  const uint64_t table = get64(img, testing::kChipChildrenAt);
  testing::put64(img, table + 8, get64(img, testing::kChipBinAt));
  EXPECT_NAMES(chip_error(img), "overlap");

  // A child image whose own total_size disagrees with the table length.
  img = raw_chip({}, "f", bytes("b"), {{1, k}});
  testing::put64(img, table + 16, k.size() - 8);
  EXPECT_NAMES(chip_error(img), "children[0] (func_id 1): total_size");
}

TEST(CallableImage, EveryFlippedBitIsRefusedByTheDigest) {
  // Structurally valid after the flip (a byte of a binary, of the name, of a child's
  // binary, of the digest itself): only the digest can tell, and it does.
  const auto k = raw_core({1}, bytes("kernel-bytes"));
  const auto img = raw_chip({1, 2}, "orch", bytes("orchestration-bytes"), {{3, k}});
  ASSERT_TRUE(parse_chip_callable_image(img.data(), img.size(), nullptr, nullptr));
  for (size_t at = 0; at < img.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      auto flipped = img;
      flipped[at] ^= static_cast<uint8_t>(1u << bit);
      std::string error;
      ASSERT_FALSE(parse_chip_callable_image(flipped.data(), flipped.size(), nullptr, &error))
          << "accepted a flip of bit " << bit << " at byte " << at;
      ASSERT_FALSE(error.empty());
    }
  }
  // A flip in the orchestration binary is named as a digest mismatch, with what to do.
  auto flipped = img;
  flipped[get64(img, testing::kChipBinAt)] ^= 1;
  const std::string error = chip_error(flipped);
  EXPECT_NAMES(error, "digest");
  EXPECT_NAMES(error, "rebuild");
  // ... and so is a child's, by the child's own digest (checked first).
  flipped = img;
  const uint64_t child_at = get64(img, get64(img, testing::kChipChildrenAt) + 8);
  flipped[child_at + get64(k, testing::kCoreBinAt)] ^= 1;
  EXPECT_NAMES(chip_error(flipped), "children[0] (func_id 3): digest");
}

TEST(CallableImage, FromBytesRefusesACorruptedImage) {
  const auto chip = ChipCallable::build(Sig{IN}, "f", bytes("orch"), {});
  std::vector<uint8_t> img(chip.bytes().begin(), chip.bytes().end());
  img.back() ^= 0x80;
  EXPECT_TASK_ERROR(ChipCallable::from_bytes(img), "digest");
}

TEST(CallableImage, UnsortedTableIsSortedInTheView) {
  const auto a = raw_core({1}, bytes("a"));
  const auto b = raw_core({2}, bytes("b"));
  const auto img = raw_chip({}, "f", bytes("o"), {{9, a}, {2, b}});
  ChipCallableView v;
  std::string error;
  ASSERT_TRUE(parse_chip_callable_image(img.data(), img.size(), &v, &error)) << error;
  ASSERT_EQ(v.children.size(), 2u);
  EXPECT_EQ(v.children[0].func_id, 2);
  EXPECT_EQ(str(v.children[0].callable.binary), "b");
  EXPECT_EQ(v.children[1].func_id, 9);
  EXPECT_EQ(str(v.children[1].callable.binary), "a");
}

TEST(CallableImage, FromBytesThrowsWithTheReadersMessage) {
  auto img = raw_chip({}, "f", bytes("o"), {{70, raw_core({}, bytes("k"))}});
  EXPECT_TASK_ERROR(ChipCallable::from_bytes(img), "children[0].func_id");
  EXPECT_TASK_ERROR(CoreCallable::from_bytes(img), "magic");
}

}  // namespace
}  // namespace simpler
