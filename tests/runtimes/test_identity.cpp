// The exported symbol set, identity entries and the kernel-mode probe of both builds.
#include <cstring>
#include <set>
#include <string>

#include "abi_test_support.h"
#include "elf_symbols.h"

extern "C" int c_host_double_destroy(SimplerGetApiFn get, char* message, size_t message_size);

namespace simpler::test {
namespace {

using Identity = BothBuilds;

TEST_P(Identity, ExportsExactlyTheOneGetApiEntry) {
  const std::set<std::string> exported = exported_dynamic_symbols(GetParam().library().path());
  EXPECT_EQ(exported, std::set<std::string>{"simpler_get_api"});
}

TEST_P(Identity, TableCarriesItsVersionAndEveryEntry) {
  const SimplerApi& api = abi().table();
  EXPECT_EQ(api.major, uint32_t{SIMPLER_API_MAJOR});
  EXPECT_EQ(api.minor, uint32_t{SIMPLER_API_MINOR});
  EXPECT_GE(api.struct_size, size_t{SIMPLER_API_STRUCT_SIZE});
  // Every function pointer after the version fields is set.
  const auto* first = reinterpret_cast<const char*>(&api.last_error);
  const auto* end = reinterpret_cast<const char*>(&api) + SIMPLER_API_STRUCT_SIZE;
  for (const char* p = first; p < end; p += sizeof(void*)) {
    void* entry = nullptr;
    std::memcpy(&entry, p, sizeof entry);
    EXPECT_NE(entry, nullptr) << "entry at offset " << (p - reinterpret_cast<const char*>(&api));
  }
}

TEST_P(Identity, ACHostDrivesTheAbiAndSeesANamedRefusal) {
  char message[256] = "unset";
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                c_host_double_destroy(GetParam().library().get_api(), message, sizeof message));
  EXPECT_NE(std::string(message).find("destroyed already"), std::string::npos) << message;
}

TEST_P(Identity, ReportsItsName) {
  const char* name = nullptr;
  EXPECT_STATUS(SIMPLER_OK, abi().name(&name));
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(name, GetParam().kernel_mode ? "tensormap_and_ringbuffer" : "host_build_graph");
}

TEST_P(Identity, AHostOfAnotherMajorVersionIsRefusedWithAMessage) {
  const SimplerGetApiFn get_api = GetParam().library().get_api();
  for (uint32_t major : {1u, 3u}) {
    const SimplerApi* api = reinterpret_cast<const SimplerApi*>(&major);  // must be reset
    const char* message = nullptr;
    EXPECT_STATUS(PTO_RUNTIME_ERR_UNSUPPORTED, get_api(major, 0, &api, &message));
    EXPECT_EQ(api, nullptr);
    ASSERT_NE(message, nullptr);
    EXPECT_NE(std::string(message).find("2.x"), std::string::npos) << message;
    EXPECT_NE(std::string(message).find("Rebuild"), std::string::npos) << message;
  }
  // A newer minor than the build has is refused too; an older or equal one is served.
  const SimplerApi* api = nullptr;
  const char* message = nullptr;
  EXPECT_STATUS(PTO_RUNTIME_ERR_UNSUPPORTED,
                get_api(SIMPLER_API_MAJOR, SIMPLER_API_MINOR + 1, &api, &message));
  EXPECT_NE(std::string(message).find("newer minor"), std::string::npos) << message;
  EXPECT_STATUS(SIMPLER_OK, get_api(SIMPLER_API_MAJOR, 0, &api, &message));
  EXPECT_EQ(api, &abi().table());
  EXPECT_STREQ(message, "");
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, get_api(SIMPLER_API_MAJOR, 0, nullptr, nullptr));
}

TEST_P(Identity, ArgsStructsAreCheckedBeforeAnythingIsRead) {
  const SimplerApi& api = abi().table();
  // NULL args, and a struct_size smaller than the 2.0 fields: INVALID_ARGUMENT with a
  // message saying what to set.
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, api.context_create(nullptr));
  EXPECT_NE(last_error(abi(), nullptr).find("args is NULL"), std::string::npos);
  SimplerContextCreateArgs small{.struct_size = offsetof(SimplerContextCreateArgs, ctx)};
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, api.context_create(&small));
  EXPECT_NE(last_error(abi(), nullptr).find("struct_size"), std::string::npos)
      << last_error(abi(), nullptr);
  // A larger struct (a host built against a newer 2.x header) is fine.
  struct Bigger {
    SimplerContextCreateArgs base;
    uint64_t future_field;
  } bigger{};
  bigger.base.struct_size = sizeof bigger;
  ASSERT_STATUS(SIMPLER_OK, api.context_create(&bigger.base));
  EXPECT_STATUS(SIMPLER_OK, abi().destroy(bigger.base.ctx));
}

TEST_P(Identity, KernelModeProbeAnswersFromTheBuildAloneTakingNoDevice) {
  sim_reset_counters();
  SimplerDeviceContext* ctx = nullptr;
  ASSERT_STATUS(SIMPLER_OK, abi().create(&ctx));
  SimplerKernelModeSupportedArgs probe{.struct_size = sizeof probe, .ctx = ctx, .supported = true};
  ASSERT_STATUS(SIMPLER_OK, abi().table().kernel_mode_supported(&probe));
  EXPECT_EQ(probe.supported, GetParam().kernel_mode);
  EXPECT_EQ(committed(abi(), ctx), 0u);
  EXPECT_EQ(call_count("set_device"), 0u);
  EXPECT_EQ(call_count("malloc"), 0u);
  EXPECT_EQ(call_count("stream_create"), 0u);
  EXPECT_STATUS(SIMPLER_OK, abi().destroy(ctx));
  // A bad context is a status, and `supported` reads false: never "nonzero means yes".
  SimplerKernelModeSupportedArgs bad{.struct_size = sizeof bad, .ctx = nullptr, .supported = true};
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().table().kernel_mode_supported(&bad));
  EXPECT_FALSE(bad.supported);
}

INSTANTIATE_FOR_BOTH_BUILDS(Identity);

TEST(Identity, BothBuildsLoadSideBySideWithSeparateState) {
  // Program-mode device claims are per loaded build: one context of each build may own
  // the same device.
  Context tmr(tmr_library().abi());
  Context hbg(hbg_library().abi());
  EXPECT_STATUS(SIMPLER_OK, tmr_library().abi().init_device(tmr, 3, nullptr));
  EXPECT_STATUS(SIMPLER_OK, hbg_library().abi().init_device(hbg, 3, nullptr));
}

}  // namespace
}  // namespace simpler::test
