// Typed signatures: ArgSpec images (version 3), core types, the reader's checks on the
// arg_types section, and check_typed_args.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "expect_error.h"
#include "raw_image.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

constexpr auto IN = ArgDirection::IN;
constexpr auto OUT = ArgDirection::OUT;
constexpr auto SCALAR = ArgDirection::SCALAR;

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<ArgSpec> typed_sig() {
  return {ArgSpec{IN, DataType::FLOAT32, 1}, ArgSpec{OUT, DataType::FLOAT32, 0},
          ArgSpec{SCALAR, DataType::INT32, 0}};
}

bool same(const ArgSpec& a, const ArgSpec& b) {
  return a.direction == b.direction && a.dtype == b.dtype && a.rank == b.rank;
}

TEST(TypedSignature, CoreCallableRecordsTypesAndCoreType) {
  const auto c = CoreCallable::build(typed_sig(), bytes("kernel"), CoreType::AIC);
  EXPECT_EQ(c.bytes()[4], 3);  // version 3: typed
  const auto specs = c.arg_specs();
  ASSERT_EQ(specs.size(), 3u);
  for (size_t i = 0; i < specs.size(); ++i) EXPECT_TRUE(same(specs[i], typed_sig()[i])) << i;
  EXPECT_EQ(c.core_type(), CoreType::AIC);
  EXPECT_EQ(c.signature(), (std::vector<ArgDirection>{IN, OUT, SCALAR}));
  const auto again = CoreCallable::from_bytes(c.bytes());
  EXPECT_EQ(again.core_type(), CoreType::AIC);
  EXPECT_TRUE(same(again.arg_specs()[0], typed_sig()[0]));
}

TEST(TypedSignature, CoreTypeAloneMakesATypedImage) {
  const std::vector<ArgSpec> untyped = {ArgSpec{IN, std::nullopt, 0}};
  const auto c = CoreCallable::build(untyped, bytes("k"), CoreType::AIV);
  EXPECT_EQ(c.bytes()[4], 3);
  EXPECT_EQ(c.core_type(), CoreType::AIV);
  EXPECT_TRUE(c.view().arg_types.empty());
  EXPECT_FALSE(c.arg_specs()[0].typed());
}

TEST(TypedSignature, UntypedImagesStayVersion2AndByteIdentical) {
  const std::vector<ArgSpec> untyped = {ArgSpec{IN, std::nullopt, 0}, ArgSpec{SCALAR}};
  const auto a = CoreCallable::build(untyped, bytes("k"));
  const auto b = CoreCallable::build(std::vector<ArgDirection>{IN, SCALAR}, bytes("k"));
  EXPECT_TRUE(std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin(), b.bytes().end()));
  EXPECT_EQ(a.bytes()[4], 2);
  EXPECT_EQ(a.core_type(), std::nullopt);
}

TEST(TypedSignature, ChipCallableCarriesTypesAndTypedChildren) {
  const auto kernel = CoreCallable::build(typed_sig(), bytes("kernel"), CoreType::AIV);
  const auto chip = ChipCallable::build(typed_sig(), "entry", bytes("orch"), {{3, kernel}});
  EXPECT_EQ(chip.bytes()[4], 3);
  EXPECT_TRUE(same(chip.arg_specs()[2], typed_sig()[2]));
  const auto view = ChipCallable::from_bytes(chip.bytes()).view();
  ASSERT_EQ(view.children.size(), 1u);
  EXPECT_EQ(view.children[0].callable.core_type, CoreType::AIV);
  EXPECT_EQ(view.children[0].callable.arg_types.size(), 6u);
  // An untyped chip over a typed child stays version 2 at the top level.
  const auto plain = ChipCallable::build(std::vector<ArgDirection>{IN, OUT, SCALAR}, "entry",
                                         bytes("o"), {{0, kernel}});
  EXPECT_EQ(plain.bytes()[4], 2);
  EXPECT_EQ(plain.view().children[0].callable.core_type, CoreType::AIV);
}

TEST(TypedSignature, BuildRefusesBadSpecs) {
  EXPECT_TASK_ERROR(
      CoreCallable::build(std::vector<ArgSpec>{ArgSpec{SCALAR, DataType::INT32, 2}}, bytes("k")),
      "signature[0].rank");
  EXPECT_TASK_ERROR(
      CoreCallable::build(std::vector<ArgSpec>{ArgSpec{IN, DataType::INT32, 6}}, bytes("k")),
      "signature[0].rank");
  EXPECT_TASK_ERROR(
      CoreCallable::build(std::vector<ArgSpec>{ArgSpec{IN, static_cast<DataType>(40), 0}},
                          bytes("k")),
      "signature[0].dtype");
}

// Rewrites one byte of a typed core image's arg_types section and parses it.
std::string corrupt_arg_types(size_t index, uint8_t value) {
  const auto c = CoreCallable::build(typed_sig(), bytes("kernel"), CoreType::AIC);
  std::vector<uint8_t> img(c.bytes().begin(), c.bytes().end());
  const uint64_t at = testing::get64(img, 80);  // arg_types offset
  img[at + index] = value;
  std::string error;
  EXPECT_FALSE(parse_core_callable_image(img.data(), img.size(), nullptr, &error));
  return error;
}

TEST(TypedSignature, ReaderRefusesCorruptTypes) {
  EXPECT_NE(corrupt_arg_types(0, 77).find("signature[0].dtype"), std::string::npos);
  EXPECT_NE(corrupt_arg_types(5, 1).find("signature[2].rank"), std::string::npos);
  const auto c = CoreCallable::build(typed_sig(), bytes("kernel"), CoreType::AIC);
  std::vector<uint8_t> img(c.bytes().begin(), c.bytes().end());
  testing::put32(img, 96, 9);  // core type
  std::string error;
  EXPECT_FALSE(parse_core_callable_image(img.data(), img.size(), nullptr, &error));
  EXPECT_NE(error.find("core_type"), std::string::npos) << error;
  img = std::vector<uint8_t>(c.bytes().begin(), c.bytes().end());
  testing::put64(img, 88, 4);  // arg_types length: not 2 per entry
  EXPECT_FALSE(parse_core_callable_image(img.data(), img.size(), nullptr, &error));
  EXPECT_NE(error.find("arg_types"), std::string::npos) << error;
  img = std::vector<uint8_t>(c.bytes().begin(), c.bytes().end());
  testing::put32(img, 4, 4);  // unknown version
  EXPECT_FALSE(parse_core_callable_image(img.data(), img.size(), nullptr, &error));
  EXPECT_NE(error.find("version"), std::string::npos) << error;
}

TEST(TypedSignature, EveryTruncationOfATypedImageIsRefused) {
  const auto kernel = CoreCallable::build(typed_sig(), bytes("kernel"), CoreType::AIV);
  const auto chip = ChipCallable::build(typed_sig(), "entry", bytes("orch"), {{0, kernel}});
  for (size_t n = 0; n < chip.bytes().size(); ++n) {
    std::vector<uint8_t> copy(chip.bytes().begin(), chip.bytes().begin() + n);
    std::string error;
    EXPECT_FALSE(parse_chip_callable_image(copy.data(), copy.size(), nullptr, &error)) << n;
  }
}

ChipStorageTaskArgs two_tensors(DataType d0, uint32_t ndims0) {
  static float storage[16];
  ChipStorageTaskArgs args{};
  const int64_t shape2[] = {4, 4};
  const int64_t shape1[] = {16};
  const auto addr = reinterpret_cast<uint64_t>(storage);
  args_add_tensor(args, make_tensor(addr,
                                    ndims0 == 2 ? std::span<const int64_t>(shape2)
                                                : std::span<const int64_t>(shape1),
                                    d0, AddressSpace::DEVICE, sizeof storage));
  args_add_tensor(args, make_tensor(addr, shape1, DataType::FLOAT32, AddressSpace::DEVICE));
  args_add_scalar(args, 7);
  return args;
}

TEST(TypedSignature, CheckTypedArgsNamesIndexExpectedAndGiven) {
  const auto sig = typed_sig();
  EXPECT_EQ(check_typed_args(two_tensors(DataType::FLOAT32, 1), sig), "");
  int64_t index = -1;
  const std::string dtype = check_typed_args(two_tensors(DataType::INT32, 1), sig, &index);
  EXPECT_EQ(index, 0);
  EXPECT_NE(dtype.find("argument 0"), std::string::npos) << dtype;
  EXPECT_NE(dtype.find("expected dtype FLOAT32"), std::string::npos) << dtype;
  EXPECT_NE(dtype.find("given INT32"), std::string::npos) << dtype;
  const std::string rank = check_typed_args(two_tensors(DataType::FLOAT32, 2), sig, &index);
  EXPECT_NE(rank.find("expected rank 1"), std::string::npos) << rank;
  EXPECT_NE(rank.find("rank 2"), std::string::npos) << rank;
  // Untyped entries accept anything.
  const std::vector<ArgSpec> untyped = {ArgSpec{IN}, ArgSpec{OUT}, ArgSpec{SCALAR}};
  EXPECT_EQ(check_typed_args(two_tensors(DataType::INT8, 2), untyped), "");
}

TEST(TypedSignature, SpecTextAndCoreNames) {
  EXPECT_EQ(arg_spec_text(ArgSpec{IN, DataType::FLOAT32, 2}), "IN FLOAT32[rank 2]");
  EXPECT_EQ(arg_spec_text(ArgSpec{OUT}), "OUT");
  EXPECT_EQ(core_type_from_name("AIC"), CoreType::AIC);
  EXPECT_STREQ(core_type_name(CoreType::AIV), "aiv");
  EXPECT_EQ(core_type_from_name("npu"), std::nullopt);
}

}  // namespace
}  // namespace simpler
