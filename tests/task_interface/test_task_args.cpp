// ChipStorageTaskArgs packing rules and scalar bit patterns.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "expect_error.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

ChipTensor tensor() {
  return make_tensor(0x1000, std::vector<int64_t>{8}, DataType::FLOAT32, AddressSpace::DEVICE);
}

bool same_bytes(const ChipStorageTaskArgs& a, const ChipStorageTaskArgs& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(TaskArgs, TensorsThenScalars) {
  ChipStorageTaskArgs args{};
  args_add_tensor(args, tensor());
  args_add_tensor(args, tensor_slice(tensor(), 0, 2, 4));
  args_add_scalar(args, 7);
  args_add_scalar(args, scalar_bits_from_i64(-1));
  EXPECT_EQ(args.tensor_count, 2u);
  EXPECT_EQ(args.scalar_count, 2u);
  EXPECT_EQ(args.tensors[1].start_offset, 2);
  EXPECT_EQ(args.scalars[0], 7u);
  EXPECT_EQ(args.scalars[1], ~uint64_t{0});
}

TEST(TaskArgs, TensorAfterScalarIsRefusedAndLeavesArgsUnchanged) {
  ChipStorageTaskArgs args{};
  args_add_tensor(args, tensor());
  args_add_scalar(args, 1);
  const ChipStorageTaskArgs before = args;
  EXPECT_TASK_ERROR(args_add_tensor(args, tensor()), "scalar");
  EXPECT_TRUE(same_bytes(args, before));
}

TEST(TaskArgs, InvalidTensorIsRefusedNamingTheArgument) {
  ChipStorageTaskArgs args{};
  args_add_tensor(args, tensor());
  ChipTensor bad = tensor();
  bad.dtype = 99;
  const ChipStorageTaskArgs before = args;
  EXPECT_TASK_ERROR(args_add_tensor(args, bad), "tensors[1].dtype");
  bad = tensor();
  bad.shapes[0] = -1;
  EXPECT_TASK_ERROR(args_add_tensor(args, bad), "tensors[1].shapes[0]");
  EXPECT_TRUE(same_bytes(args, before));
}

TEST(TaskArgs, CapacityOverflowIsRefused) {
  ChipStorageTaskArgs args{};
  for (int i = 0; i < CHIP_MAX_TENSOR_ARGS; ++i) args_add_tensor(args, tensor());
  EXPECT_TASK_ERROR(args_add_tensor(args, tensor()), "tensor_count");
  EXPECT_EQ(args.tensor_count, static_cast<uint32_t>(CHIP_MAX_TENSOR_ARGS));
  for (int i = 0; i < CHIP_MAX_SCALAR_ARGS; ++i) args_add_scalar(args, i);
  EXPECT_TASK_ERROR(args_add_scalar(args, 0), "scalar_count");
  EXPECT_EQ(args.scalar_count, static_cast<uint32_t>(CHIP_MAX_SCALAR_ARGS));
}

TEST(TaskArgs, ScalarBitPatterns) {
  const uint64_t f = scalar_bits_from_f32(1.5f);
  EXPECT_EQ(f, 0x3FC00000u);  // IEEE-754 single in the low 32 bits, high bits zero
  EXPECT_EQ(scalar_bits_to_f32(f), 1.5f);
  EXPECT_EQ(scalar_bits_from_f32(-0.0f), 0x80000000u);
  EXPECT_EQ(scalar_bits_to_f32(0xFFFFFFFF00000000ull | 0x3FC00000u), 1.5f);  // high ignored
  const uint64_t d = scalar_bits_from_f64(-2.25);
  EXPECT_EQ(d, 0xC002000000000000ull);
  EXPECT_EQ(scalar_bits_to_f64(d), -2.25);
  EXPECT_EQ(scalar_bits_from_i64(-2), 0xFFFFFFFFFFFFFFFEull);
  EXPECT_EQ(scalar_bits_from_i64(INT64_MIN), 0x8000000000000000ull);
}

}  // namespace
}  // namespace simpler
