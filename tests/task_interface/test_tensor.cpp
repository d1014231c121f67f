// ChipTensor: make, numel, contiguity, byte extent, validation and zero-copy views.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "expect_error.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

constexpr uint64_t kAddr = 0x10000;

ChipTensor make(std::vector<int64_t> shape, DataType dt = DataType::FLOAT32,
                uint64_t buffer_bytes = 0) {
  return make_tensor(kAddr, shape, dt, AddressSpace::DEVICE, buffer_bytes);
}

TEST(Tensor, MakeIsContiguousRowMajor) {
  const ChipTensor t = make({2, 3, 4}, DataType::INT16);
  EXPECT_EQ(t.ndims, 3u);
  EXPECT_EQ(t.shapes[0], 2);
  EXPECT_EQ(t.shapes[2], 4);
  EXPECT_EQ(t.strides[0], 12);
  EXPECT_EQ(t.strides[1], 4);
  EXPECT_EQ(t.strides[2], 1);
  EXPECT_EQ(t.start_offset, 0);
  EXPECT_EQ(t.buffer.addr, kAddr);
  EXPECT_EQ(t.buffer.size, 2u * 3 * 4 * 2);
  EXPECT_EQ(t.dtype, static_cast<uint32_t>(DataType::INT16));
  EXPECT_EQ(t.space, static_cast<uint32_t>(AddressSpace::DEVICE));
  EXPECT_EQ(tensor_numel(t), 24);
  EXPECT_TRUE(tensor_is_contiguous(t));
  EXPECT_EQ(tensor_byte_extent(t), (std::pair<uint64_t, uint64_t>{0, 48}));
}

TEST(Tensor, MakeHonoursALargerBufferAndRefusesASmallerOne) {
  const ChipTensor t = make({4}, DataType::FLOAT32, 64);
  EXPECT_EQ(t.buffer.size, 64u);
  EXPECT_TASK_ERROR(make({4}, DataType::FLOAT32, 15), "buffer_bytes");
}

TEST(Tensor, MakeRefusesBadShapesAndDtypes) {
  EXPECT_TASK_ERROR(make({}), "shape");
  EXPECT_TASK_ERROR(make({1, 1, 1, 1, 1, 1}), "shape");
  EXPECT_TASK_ERROR(make({2, -1}), "shape[1]");
  EXPECT_TASK_ERROR(make({2}, static_cast<DataType>(77)), "dtype");
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_TASK_ERROR(make({huge, huge}), "overflow");
}

TEST(Tensor, EmptyTensorHasNoExtent) {
  const ChipTensor t = make({3, 0});
  EXPECT_EQ(tensor_numel(t), 0);
  EXPECT_TRUE(tensor_is_contiguous(t));
  EXPECT_EQ(tensor_byte_extent(t), (std::pair<uint64_t, uint64_t>{0, 0}));
  EXPECT_NO_THROW(make_tensor(0, std::vector<int64_t>{0}, DataType::INT8, AddressSpace::HOST));
}

TEST(Tensor, ValidateChecksEveryField) {
  const ChipTensor good = make({4, 4});
  EXPECT_NO_THROW(validate_tensor(good));

  ChipTensor t = good;
  t.ndims = 0;
  EXPECT_TASK_ERROR(validate_tensor(t), "ndims");
  t.ndims = 6;
  EXPECT_TASK_ERROR(validate_tensor(t), "ndims");

  t = good;
  t.dtype = CHIP_DT_COUNT;
  EXPECT_TASK_ERROR(validate_tensor(t), "dtype");

  t = good;
  t.space = 2;
  EXPECT_TASK_ERROR(validate_tensor(t), "space");

  t = good;
  t.shapes[1] = -4;
  EXPECT_TASK_ERROR(validate_tensor(t), "shapes[1]");

  t = good;
  t.strides[0] = -4;
  EXPECT_TASK_ERROR(validate_tensor(t), "strides[0]");

  t = good;
  t.start_offset = -1;
  EXPECT_TASK_ERROR(validate_tensor(t), "start_offset");

  t = good;
  t.start_offset = 1;  // shifts the 64-byte view one element past its 64-byte buffer
  EXPECT_TASK_ERROR(validate_tensor(t), "buffer.size");

  t = good;
  t.buffer.size -= 1;
  EXPECT_TASK_ERROR(validate_tensor(t), "buffer.size");

  t = good;
  t.buffer.addr = 0;
  EXPECT_TASK_ERROR(validate_tensor(t), "buffer.addr");

  t = good;
  t.buffer.addr = std::numeric_limits<uint64_t>::max() - 8;
  EXPECT_TASK_ERROR(validate_tensor(t), "buffer");

  t = good;
  t.strides[0] = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_TASK_ERROR(validate_tensor(t), "overflow");

  t = good;
  t.start_offset = std::numeric_limits<int64_t>::max() - 1;
  EXPECT_TASK_ERROR(validate_tensor(t), "overflow");
}

// validate_tensor has a one-pass fast path with its own element-size table: for every
// dtype, a buffer of exactly the view's bytes passes and one byte less is refused.
TEST(Tensor, ValidateUsesEachDtypesElementSize) {
  for (uint32_t raw = 0; raw < CHIP_DT_COUNT; ++raw) {
    const auto dt = static_cast<DataType>(raw);
    ChipTensor t = make({3, 5}, dt);
    t.start_offset = 2;
    t.shapes[0] = 2;  // touches elements 2 .. 2 + 2*5 - 1
    t.buffer.size = 12 * element_size(dt);
    EXPECT_NO_THROW(validate_tensor(t)) << data_type_name(dt);
    t.buffer.size -= 1;
    EXPECT_THROW(validate_tensor(t), TaskInterfaceError) << data_type_name(dt);
  }
}

TEST(Tensor, StridedViewNeedsOnlyTheBytesItTouches) {
  ChipTensor t = make({4, 4});  // 64 bytes
  t.shapes[1] = 2;              // columns 0..1 of each row: last element at index 13
  EXPECT_FALSE(tensor_is_contiguous(t));
  EXPECT_EQ(tensor_byte_extent(t), (std::pair<uint64_t, uint64_t>{0, 56}));
  t.buffer.size = 56;
  EXPECT_NO_THROW(validate_tensor(t));
  t.buffer.size = 55;
  EXPECT_TASK_ERROR(validate_tensor(t), "buffer.size");
}

TEST(Tensor, SliceAdjustsOffsetAndKeepsStrides) {
  const ChipTensor t = make({4, 6});
  const ChipTensor rows = tensor_slice(t, 0, 1, 3);
  EXPECT_EQ(rows.start_offset, 6);
  EXPECT_EQ(rows.shapes[0], 2);
  EXPECT_EQ(rows.shapes[1], 6);
  EXPECT_EQ(rows.strides[0], 6);
  EXPECT_EQ(rows.strides[1], 1);
  EXPECT_EQ(rows.buffer.addr, t.buffer.addr);
  EXPECT_EQ(rows.buffer.size, t.buffer.size);
  EXPECT_TRUE(tensor_is_contiguous(rows));
  EXPECT_EQ(tensor_byte_extent(rows), (std::pair<uint64_t, uint64_t>{24, 72}));

  const ChipTensor cols = tensor_slice(rows, 1, 2, 5);
  EXPECT_EQ(cols.start_offset, 8);
  EXPECT_EQ(cols.shapes[1], 3);
  EXPECT_EQ(cols.strides[0], 6);
  EXPECT_FALSE(tensor_is_contiguous(cols));
  EXPECT_EQ(tensor_byte_extent(cols), (std::pair<uint64_t, uint64_t>{32, 4 * (6 + 8 + 3)}));

  const ChipTensor empty = tensor_slice(t, 1, 3, 3);
  EXPECT_EQ(tensor_numel(empty), 0);
}

TEST(Tensor, SliceRefusesBadRanges) {
  const ChipTensor t = make({4, 6});
  EXPECT_TASK_ERROR(tensor_slice(t, 2, 0, 1), "dim");
  EXPECT_TASK_ERROR(tensor_slice(t, 0, -1, 2), "slice");
  EXPECT_TASK_ERROR(tensor_slice(t, 0, 3, 2), "slice");
  EXPECT_TASK_ERROR(tensor_slice(t, 1, 0, 7), "slice");
}

TEST(Tensor, ReshapeContiguousPreservesNumel) {
  const ChipTensor t = tensor_slice(make({4, 6}), 0, 1, 3);  // contiguous, offset 6
  const ChipTensor r = tensor_reshape(t, std::vector<int64_t>{3, 2, 2});
  EXPECT_EQ(r.ndims, 3u);
  EXPECT_EQ(r.start_offset, 6);
  EXPECT_EQ(r.strides[0], 4);
  EXPECT_EQ(r.strides[1], 2);
  EXPECT_EQ(r.strides[2], 1);
  EXPECT_EQ(tensor_byte_extent(r), tensor_byte_extent(t));
  EXPECT_TASK_ERROR(tensor_reshape(t, std::vector<int64_t>{5, 2}), "elements");
  EXPECT_TASK_ERROR(tensor_reshape(t, std::vector<int64_t>{-12}), "reshape shape");
  EXPECT_TASK_ERROR(tensor_reshape(t, std::vector<int64_t>{}), "reshape shape");
}

TEST(Tensor, ReshapeRefusesNonContiguous) {
  const ChipTensor t = make({4, 6});
  EXPECT_TASK_ERROR(tensor_reshape(tensor_slice(t, 1, 0, 3), std::vector<int64_t>{12}),
                    "contiguous");
  EXPECT_TASK_ERROR(tensor_reshape(tensor_transpose(t, 0, 1), std::vector<int64_t>{24}),
                    "contiguous");
}

TEST(Tensor, TransposeSwapsShapesAndStrides) {
  const ChipTensor t = make({2, 3, 4});
  const ChipTensor tr = tensor_transpose(t, 0, 2);
  EXPECT_EQ(tr.shapes[0], 4);
  EXPECT_EQ(tr.shapes[2], 2);
  EXPECT_EQ(tr.strides[0], 1);
  EXPECT_EQ(tr.strides[2], 12);
  EXPECT_FALSE(tensor_is_contiguous(tr));
  EXPECT_EQ(tensor_byte_extent(tr), tensor_byte_extent(t));
  EXPECT_TRUE(tensor_is_contiguous(tensor_transpose(tr, 2, 0)));
  EXPECT_TASK_ERROR(tensor_transpose(t, 0, 3), "dim1");
  EXPECT_TASK_ERROR(tensor_transpose(t, 5, 0), "dim0");
}

TEST(Tensor, ViewsRefuseAnInvalidSource) {
  ChipTensor t = make({4});
  t.buffer.size = 4;
  EXPECT_TASK_ERROR(tensor_slice(t, 0, 0, 1), "buffer.size");
  EXPECT_TASK_ERROR(tensor_transpose(t, 0, 0), "buffer.size");
  EXPECT_TASK_ERROR(tensor_reshape(t, std::vector<int64_t>{4}), "buffer.size");
}

}  // namespace
}  // namespace simpler
