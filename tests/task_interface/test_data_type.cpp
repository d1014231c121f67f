// DataType / ArgDirection / AddressSpace: ABI values, element sizes, names.
#include <gtest/gtest.h>

#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

TEST(DataType, ElementSizesAndNamesFollowTheAbiValues) {
  struct Row {
    DataType dtype;
    uint32_t abi;
    size_t size;
    const char* name;
  };
  const Row rows[] = {
      {DataType::FLOAT32, 0, 4, "FLOAT32"},   {DataType::FLOAT16, 1, 2, "FLOAT16"},
      {DataType::BFLOAT16, 2, 2, "BFLOAT16"}, {DataType::INT8, 3, 1, "INT8"},
      {DataType::INT16, 4, 2, "INT16"},       {DataType::INT32, 5, 4, "INT32"},
      {DataType::INT64, 6, 8, "INT64"},       {DataType::UINT8, 7, 1, "UINT8"},
      {DataType::UINT16, 8, 2, "UINT16"},     {DataType::UINT32, 9, 4, "UINT32"},
      {DataType::UINT64, 10, 8, "UINT64"},    {DataType::BOOL, 11, 1, "BOOL"},
      {DataType::FLOAT64, 12, 8, "FLOAT64"},
  };
  ASSERT_EQ(std::size(rows), static_cast<size_t>(CHIP_DT_COUNT));
  for (const Row& r : rows) {
    EXPECT_EQ(static_cast<uint32_t>(r.dtype), r.abi) << r.name;
    EXPECT_TRUE(is_valid_data_type(r.abi));
    EXPECT_EQ(element_size(r.dtype), r.size) << r.name;
    EXPECT_STREQ(data_type_name(r.dtype), r.name);
    ASSERT_TRUE(data_type_from_name(r.name).has_value());
    EXPECT_EQ(*data_type_from_name(r.name), r.dtype);
  }
}

TEST(DataType, InvalidValuesAreRefused) {
  EXPECT_FALSE(is_valid_data_type(CHIP_DT_COUNT));
  EXPECT_FALSE(is_valid_data_type(0xFFFFFFFFu));
  EXPECT_THROW(element_size(static_cast<DataType>(13)), TaskInterfaceError);
  EXPECT_THROW(data_type_name(static_cast<DataType>(99)), TaskInterfaceError);
  EXPECT_FALSE(data_type_from_name("float32").has_value());  // names are exact
  EXPECT_FALSE(data_type_from_name("").has_value());
  try {
    element_size(static_cast<DataType>(42));
    FAIL();
  } catch (const TaskInterfaceError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype"), std::string::npos) << e.what();
  }
}

TEST(ArgDirection, ValuesAndNames) {
  EXPECT_EQ(static_cast<uint32_t>(ArgDirection::SCALAR), 0u);
  EXPECT_EQ(static_cast<uint32_t>(ArgDirection::IN), 1u);
  EXPECT_EQ(static_cast<uint32_t>(ArgDirection::OUT), 2u);
  EXPECT_EQ(static_cast<uint32_t>(ArgDirection::INOUT), 3u);
  EXPECT_STREQ(arg_direction_name(ArgDirection::SCALAR), "SCALAR");
  EXPECT_STREQ(arg_direction_name(ArgDirection::IN), "IN");
  EXPECT_STREQ(arg_direction_name(ArgDirection::OUT), "OUT");
  EXPECT_STREQ(arg_direction_name(ArgDirection::INOUT), "INOUT");
  EXPECT_THROW(arg_direction_name(static_cast<ArgDirection>(4)), TaskInterfaceError);
}

TEST(AddressSpace, Values) {
  EXPECT_EQ(static_cast<uint32_t>(AddressSpace::HOST), 0u);
  EXPECT_EQ(static_cast<uint32_t>(AddressSpace::DEVICE), 1u);
}

}  // namespace
}  // namespace simpler
