// CallConfig: validation rules, ABI conversion, the non-throwing ABI check.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "expect_error.h"
#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

TEST(CallConfig, DefaultsAreValid) {
  const CallConfig c;
  EXPECT_NO_THROW(c.validate());
  const SimplerCallConfig abi = c.to_abi();
  EXPECT_EQ(abi.struct_size, sizeof(SimplerCallConfig));
  EXPECT_EQ(abi.flags, 0u);
  EXPECT_EQ(validate_call_config(abi), "");
}

TEST(CallConfig, EverySwitchRequiresAnOutputPrefix) {
  for (int which = 0; which < 4; ++which) {
    CallConfig c;
    (which == 0   ? c.enable_swimlane
     : which == 1 ? c.dump_args
     : which == 2 ? c.dump_dep_graph
                  : c.enable_profiling) = true;
    EXPECT_TASK_ERROR(c.validate(), "output_prefix");
    c.output_prefix = "/tmp/run";
    EXPECT_NO_THROW(c.validate());
  }
}

TEST(CallConfig, OutputPrefixMustFitTheAbiField) {
  CallConfig c;
  c.dump_args = true;
  c.output_prefix = std::string(SIMPLER_OUTPUT_PREFIX_MAX - 1, 'p');
  EXPECT_NO_THROW(c.validate());
  c.output_prefix.push_back('p');
  EXPECT_TASK_ERROR(c.validate(), "output_prefix");
  c.output_prefix = std::string("a\0b", 3);
  EXPECT_TASK_ERROR(c.validate(), "output_prefix");
}

TEST(CallConfig, NumericRanges) {
  auto with = [](auto set) {
    CallConfig c;
    set(c);
    return c;
  };
  for (int32_t ok : {0, 2, 4, 16}) {
    EXPECT_NO_THROW(with([&](CallConfig& c) { c.aicpu_thread_num = ok; }).validate());
  }
  for (int32_t bad : {1, 17, -1}) {
    EXPECT_TASK_ERROR(with([&](CallConfig& c) { c.aicpu_thread_num = bad; }).validate(),
                      "aicpu_thread_num");
  }
  for (uint64_t ok : {0, 4, 8, 1024}) {
    EXPECT_NO_THROW(with([&](CallConfig& c) { c.task_window_size = ok; }).validate());
  }
  for (uint64_t bad : {1, 2, 3, 6, 1000}) {
    EXPECT_TASK_ERROR(with([&](CallConfig& c) { c.task_window_size = bad; }).validate(),
                      "task_window_size");
  }
  EXPECT_NO_THROW(with([](CallConfig& c) { c.heap_ring_bytes = 4096; }).validate());
  EXPECT_TASK_ERROR(with([](CallConfig& c) { c.heap_ring_bytes = 4095; }).validate(),
                    "heap_ring_bytes");
  EXPECT_NO_THROW(with([](CallConfig& c) { c.dep_pool_size = 16; }).validate());
  EXPECT_TASK_ERROR(with([](CallConfig& c) { c.dep_pool_size = 15; }).validate(), "dep_pool_size");
  EXPECT_NO_THROW(with([](CallConfig& c) { c.tensormap_capacity = 16; }).validate());
  EXPECT_TASK_ERROR(with([](CallConfig& c) { c.tensormap_capacity = 1; }).validate(),
                    "tensormap_capacity");
  // The message names the allowed values too.
  EXPECT_TASK_ERROR(with([](CallConfig& c) { c.task_window_size = 3; }).validate(), "power of two");
}

TEST(CallConfig, AbiRoundTrip) {
  CallConfig c;
  c.enable_swimlane = true;
  c.dump_dep_graph = true;
  c.output_prefix = "out/run1";
  c.aicpu_thread_num = 3;
  c.task_window_size = 64;
  c.heap_ring_bytes = 1 << 20;
  c.dep_pool_size = 256;
  c.tensormap_capacity = 128;
  c.watchdog_timeout_ms = 5000;
  const SimplerCallConfig abi = c.to_abi();
  EXPECT_EQ(abi.flags, SIMPLER_CFG_SWIMLANE | SIMPLER_CFG_DEP_GRAPH);
  EXPECT_STREQ(abi.output_prefix, "out/run1");
  EXPECT_EQ(abi.task_window_size, 64u);
  const CallConfig back = CallConfig::from_abi(abi);
  EXPECT_TRUE(back.enable_swimlane);
  EXPECT_FALSE(back.dump_args);
  EXPECT_TRUE(back.dump_dep_graph);
  EXPECT_FALSE(back.enable_profiling);
  EXPECT_EQ(back.output_prefix, "out/run1");
  EXPECT_EQ(back.aicpu_thread_num, 3);
  EXPECT_EQ(back.heap_ring_bytes, 1u << 20);
  EXPECT_EQ(back.dep_pool_size, 256u);
  EXPECT_EQ(back.tensormap_capacity, 128u);
  EXPECT_EQ(back.watchdog_timeout_ms, 5000u);
}

TEST(CallConfig, ToAbiValidatesFirst) {
  CallConfig c;
  c.dep_pool_size = 3;
  EXPECT_TASK_ERROR(c.to_abi(), "dep_pool_size");
}

TEST(CallConfig, AbiCheckIsNonThrowingAndNamesTheField) {
  SimplerCallConfig abi = CallConfig{}.to_abi();
  SimplerCallConfig bad = abi;
  bad.struct_size = 8;
  EXPECT_NE(validate_call_config(bad).find("struct_size"), std::string::npos);
  EXPECT_TASK_ERROR(CallConfig::from_abi(bad), "struct_size");

  bad = abi;
  bad.flags = 0x10;
  EXPECT_NE(validate_call_config(bad).find("flags"), std::string::npos);

  bad = abi;
  std::memset(bad.output_prefix, 'x', sizeof bad.output_prefix);  // no NUL anywhere
  EXPECT_NE(validate_call_config(bad).find("NUL-terminated"), std::string::npos);

  bad = abi;
  bad.flags = SIMPLER_CFG_PROFILING;  // switch on, prefix empty
  EXPECT_NE(validate_call_config(bad).find("output_prefix"), std::string::npos);
  std::strcpy(bad.output_prefix, "p");
  EXPECT_EQ(validate_call_config(bad), "");

  bad = abi;
  bad.aicpu_thread_num = 1;
  EXPECT_NE(validate_call_config(bad).find("aicpu_thread_num"), std::string::npos);
  bad = abi;
  bad.task_window_size = 12;
  EXPECT_NE(validate_call_config(bad).find("task_window_size"), std::string::npos);
  bad = abi;
  bad.heap_ring_bytes = 100;
  EXPECT_NE(validate_call_config(bad).find("heap_ring_bytes"), std::string::npos);
  bad = abi;
  bad.dep_pool_size = 1;
  EXPECT_NE(validate_call_config(bad).find("dep_pool_size"), std::string::npos);
  bad = abi;
  bad.tensormap_capacity = 1;
  EXPECT_NE(validate_call_config(bad).find("tensormap_capacity"), std::string::npos);
}

// Every size is bounded by what a device and a host can hold; the message names the limit.
TEST(CallConfigTest, SizesAreBoundedWithTheLimitInTheMessage) {
  struct Case {
    const char* field;
    void (*set)(CallConfig&, uint64_t);
    uint64_t limit;
  };
  const Case cases[] = {
      {"task_window_size", [](CallConfig& c, uint64_t v) { c.task_window_size = v; },
       uint64_t{1} << 20},
      {"heap_ring_bytes", [](CallConfig& c, uint64_t v) { c.heap_ring_bytes = v; },
       uint64_t{1} << 40},
      {"dep_pool_size", [](CallConfig& c, uint64_t v) { c.dep_pool_size = v; }, uint64_t{1} << 26},
      {"tensormap_capacity", [](CallConfig& c, uint64_t v) { c.tensormap_capacity = v; },
       uint64_t{1} << 24},
      {"watchdog_timeout_ms", [](CallConfig& c, uint64_t v) { c.watchdog_timeout_ms = v; },
       uint64_t{1} << 40},
  };
  for (const Case& k : cases) {
    CallConfig c;
    k.set(c, k.limit);
    EXPECT_NO_THROW(c.validate()) << k.field;
    k.set(c, k.limit * 2);
    const std::string expected = std::string(k.field) + ": " + std::to_string(k.limit * 2) +
                                 " is larger than the limit " + std::to_string(k.limit);
    try {
      c.validate();
      ADD_FAILURE() << k.field << " " << k.limit * 2 << " accepted";
    } catch (const TaskInterfaceError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    SimplerCallConfig abi{};  // the ABI check refuses the same value
    abi.struct_size = sizeof abi;
    abi.task_window_size = c.task_window_size;
    abi.heap_ring_bytes = c.heap_ring_bytes;
    abi.dep_pool_size = c.dep_pool_size;
    abi.tensormap_capacity = c.tensormap_capacity;
    abi.watchdog_timeout_ms = c.watchdog_timeout_ms;
    EXPECT_NE(validate_call_config(abi).find(expected), std::string::npos) << k.field;
  }
}

}  // namespace
}  // namespace simpler
