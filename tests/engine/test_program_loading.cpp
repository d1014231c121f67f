// LoadedProgram: images loaded from bytes through private temp files that never stay
// behind, on success or on any failure.
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include "engine_test_support.h"
#include "scratch.h"

namespace simpler::rt::testing {
namespace {

// Points TMPDIR at a fresh directory for one test and removes it afterwards.
class ProgramLoadingTest : public EngineTest {
 protected:
  std::vector<std::string> leftovers() const {
    std::vector<std::string> names;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
          names.push_back(e->d_name);
      }
      closedir(d);
    }
    return names;
  }
  int try_load(const ChipCallable& callable, std::string* error) {
    std::unique_ptr<LoadedProgram> program;
    const int rc = LoadedProgram::load(callable.view(), &program, error);
    EXPECT_EQ(rc == SIMPLER_OK, program != nullptr);
    return rc;
  }

  simpler::test::ScratchDir scratch_;
  const std::string dir_ = scratch_.path().string();
  simpler::test::ScopedEnv tmpdir_{"TMPDIR", dir_};
};

const std::vector<ArgDirection> kVaddSig = {ArgDirection::IN, ArgDirection::IN, ArgDirection::OUT};

CoreCallable vadd_kernel() {
  return test_programs::kernel_callable(test_programs::paths::kernel_vector_add, kVaddSig);
}

TEST_F(ProgramLoadingTest, LoadsRunsAndLeavesNothingBehind) {
  std::unique_ptr<LoadedProgram> program;
  {
    const ChipCallable callable = test_programs::dag();  // several kernel images
    std::string error;
    ASSERT_EQ(LoadedProgram::load(callable.view(), &program, &error), SIMPLER_OK) << error;
  }  // the program does not need the image any more
  EXPECT_TRUE(leftovers().empty());
  auto e = make_engine();
  DeviceBuffer a(64 * 4), b(64 * 4), f(64 * 4);
  a.upload(std::vector<float>(64, 1.0f));
  b.upload(std::vector<float>(64, 0.0f));
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({a.tensor({64}), b.tensor({64}), f.tensor({64})}), &error),
            SIMPLER_OK)
      << error;
  EXPECT_EQ(f.download<float>(), std::vector<float>(64, 2.0f * 3.0f + 1.0f));
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ProgramLoadingTest, GarbageOrchestrationBytesFailCleanly) {
  const std::vector<uint8_t> garbage(4096, 0x5a);
  const ChipCallable callable =
      ChipCallable::build(kVaddSig, "orch_vector_add", garbage, {{0, vadd_kernel()}});
  std::string error;
  EXPECT_EQ(try_load(callable, &error), SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED);
  EXPECT_NE(error.find("orchestration image could not be loaded"), std::string::npos) << error;
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ProgramLoadingTest, MissingEntrySymbolFailsCleanly) {
  const auto orch = test_programs::read_file_bytes(test_programs::paths::orch_vector_add);
  const ChipCallable callable =
      ChipCallable::build(kVaddSig, "no_such_entry", orch, {{0, vadd_kernel()}});
  std::string error;
  EXPECT_EQ(try_load(callable, &error), SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED);
  EXPECT_NE(error.find("'no_such_entry'"), std::string::npos) << error;
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ProgramLoadingTest, KernelWithoutKernelEntryFailsCleanly) {
  const auto orch = test_programs::read_file_bytes(test_programs::paths::orch_vector_add);
  // An orchestration image does not export kernel_entry.
  const CoreCallable not_a_kernel = CoreCallable::build(kVaddSig, orch);
  const ChipCallable callable =
      ChipCallable::build(kVaddSig, "orch_vector_add", orch, {{5, not_a_kernel}});
  std::string error;
  EXPECT_EQ(try_load(callable, &error), SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED);
  EXPECT_NE(error.find("func_id 5"), std::string::npos) << error;
  EXPECT_NE(error.find("kernel_entry"), std::string::npos) << error;
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ProgramLoadingTest, GarbageKernelBytesFailCleanly) {
  const auto orch = test_programs::read_file_bytes(test_programs::paths::orch_vector_add);
  const CoreCallable garbage = CoreCallable::build(kVaddSig, std::vector<uint8_t>(100, 1));
  const ChipCallable callable =
      ChipCallable::build(kVaddSig, "orch_vector_add", orch, {{0, garbage}});
  std::string error;
  EXPECT_EQ(try_load(callable, &error), SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED);
  EXPECT_NE(error.find("kernel image of func_id 0"), std::string::npos) << error;
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ProgramLoadingTest, LoadsWithoutAnyWritableTempDirectory) {
  // Images load from an anonymous file (memfd_create): $TMPDIR is never used, so a
  // missing, read-only or noexec temp directory does not matter.
  setenv("TMPDIR", (dir_ + "/does-not-exist").c_str(), 1);
  std::string error;
  EXPECT_EQ(try_load(test_programs::vector_add(), &error), SIMPLER_OK) << error;
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(ProgramLoadingTest, AReusedDescriptorNumberNeverNamesTheOldImage) {
  // The loader matches loaded objects by name (/proc/self/fd/N): after one program is
  // unloaded, the next one may get the same descriptor number and must still be itself.
  for (int round = 0; round < 3; ++round) {
    std::string error;
    {
      std::unique_ptr<LoadedProgram> first;
      ASSERT_EQ(LoadedProgram::load(test_programs::vector_add().view(), &first, &error), SIMPLER_OK)
          << error;
    }
    std::unique_ptr<LoadedProgram> program;
    ASSERT_EQ(LoadedProgram::load(test_programs::dag().view(), &program, &error), SIMPLER_OK)
        << error;
    auto e = make_engine();
    DeviceBuffer a(64 * 4), b(64 * 4), f(64 * 4);
    a.upload(std::vector<float>(64, 1.0f));
    b.upload(std::vector<float>(64, 0.0f));
    ASSERT_EQ(
        run(*e, *program, make_args({a.tensor({64}), b.tensor({64}), f.tensor({64})}), &error),
        SIMPLER_OK)
        << error;
    EXPECT_EQ(f.download<float>(), std::vector<float>(64, 2.0f * 3.0f + 1.0f));
  }
}

TEST_F(ProgramLoadingTest, EmptyFuncNameIsAnInvalidArgument) {
  const ChipCallable callable = test_programs::vector_add();
  ChipCallableView view = callable.view();
  view.func_name = "";
  std::unique_ptr<LoadedProgram> program;
  std::string error;
  EXPECT_EQ(LoadedProgram::load(view, &program, &error), PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(program, nullptr);
  EXPECT_NE(error.find("func_name"), std::string::npos) << error;
  EXPECT_TRUE(leftovers().empty());
}

}  // namespace
}  // namespace simpler::rt::testing
