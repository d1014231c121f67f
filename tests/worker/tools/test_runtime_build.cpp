// find_runtime_build: validation order, the hardware refusal, missing files, the layout.
#include "simpler/worker/runtime_build.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.h"

namespace simpler {
namespace {

using test::ScopedEnv;
using test::ScratchDir;
using test::touch;
using ::testing::HasSubstr;

// Creates the files of a complete build for `runtime` under `lib_dir`.
void make_fake_build(const std::filesystem::path& lib_dir, const std::string& runtime) {
  touch(lib_dir / "libsimpler_sim.so");
  touch(lib_dir / "runtimes" / "a2a3sim" / runtime / "libhost_runtime.so");
}

TEST(RuntimeBuild, KnownNames) {
  EXPECT_EQ(known_platforms(), (std::vector<std::string>{"a2a3sim", "a2a3"}));
  EXPECT_EQ(known_runtimes(),
            (std::vector<std::string>{"tensormap_and_ringbuffer", "host_build_graph"}));
}

TEST(RuntimeBuild, UnknownPlatformListsTheValidOnes) {
  try {
    find_runtime_build("a5sim", "tensormap_and_ringbuffer", "/nonexistent");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'a5sim'"));
    EXPECT_THAT(e.what(), HasSubstr("'a2a3sim'"));
    EXPECT_THAT(e.what(), HasSubstr("'a2a3'"));
  }
}

TEST(RuntimeBuild, HardwarePlatformIsRefusedNamingTheSimulatorAndCann) {
  ScratchDir dir;
  make_fake_build(dir.path(), "tensormap_and_ringbuffer");
  // Even with files present the hardware platform is never mapped onto the simulator.
  touch(dir.path() / "runtimes" / "a2a3" / "tensormap_and_ringbuffer" / "libhost_runtime.so");
  try {
    find_runtime_build("a2a3", "tensormap_and_ringbuffer", dir.path().string());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("only the simulator"));
    EXPECT_THAT(e.what(), HasSubstr("'a2a3sim'"));
    EXPECT_THAT(e.what(), HasSubstr("CANN"));
  }
}

TEST(RuntimeBuild, UnknownRuntimeListsTheValidOnes) {
  try {
    find_runtime_build("a2a3sim", "ringbuffer", "/nonexistent");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'ringbuffer'"));
    EXPECT_THAT(e.what(), HasSubstr("'tensormap_and_ringbuffer'"));
    EXPECT_THAT(e.what(), HasSubstr("'host_build_graph'"));
  }
}

TEST(RuntimeBuild, MissingHostLibraryNamesItsPath) {
  ScratchDir dir;
  touch(dir.path() / "libsimpler_sim.so");
  const std::string expected =
      (dir.path() / "runtimes" / "a2a3sim" / "host_build_graph" / "libhost_runtime.so").string();
  try {
    find_runtime_build("a2a3sim", "host_build_graph", dir.path().string());
    FAIL() << "expected RuntimeBuildNotFound";
  } catch (const RuntimeBuildNotFound& e) {
    EXPECT_EQ(e.path(), expected);
    EXPECT_THAT(e.what(), HasSubstr(expected));
    EXPECT_THAT(e.what(), HasSubstr("SIMPLER_LIB_DIR"));
  }
}

TEST(RuntimeBuild, MissingSimContextNamesItsPath) {
  ScratchDir dir;
  touch(dir.path() / "runtimes" / "a2a3sim" / "tensormap_and_ringbuffer" / "libhost_runtime.so");
  const std::string expected = (dir.path() / "libsimpler_sim.so").string();
  try {
    find_runtime_build("a2a3sim", "tensormap_and_ringbuffer", dir.path().string());
    FAIL() << "expected RuntimeBuildNotFound";
  } catch (const RuntimeBuildNotFound& e) {
    EXPECT_EQ(e.path(), expected);
    EXPECT_THAT(e.what(), HasSubstr(expected));
  }
}

TEST(RuntimeBuild, ADirectoryIsNotALibrary) {
  ScratchDir dir;
  touch(dir.path() / "libsimpler_sim.so");
  std::filesystem::create_directories(dir.path() / "runtimes" / "a2a3sim" /
                                      "tensormap_and_ringbuffer" / "libhost_runtime.so");
  EXPECT_THROW(find_runtime_build("a2a3sim", "tensormap_and_ringbuffer", dir.path().string()),
               RuntimeBuildNotFound);
}

TEST(RuntimeBuild, CompleteLayoutIsFound) {
  ScratchDir dir;
  make_fake_build(dir.path(), "host_build_graph");
  const RuntimeBins bins = find_runtime_build("a2a3sim", "host_build_graph", dir.path().string());
  EXPECT_EQ(bins.platform, "a2a3sim");
  EXPECT_EQ(bins.runtime, "host_build_graph");
  EXPECT_EQ(
      bins.host_lib_path,
      (dir.path() / "runtimes" / "a2a3sim" / "host_build_graph" / "libhost_runtime.so").string());
  EXPECT_EQ(bins.sim_context_path, (dir.path() / "libsimpler_sim.so").string());
  // The simulator's executors live inside the host runtime library.
  EXPECT_TRUE(bins.aicpu_image_path.empty());
  EXPECT_TRUE(bins.aicore_image_path.empty());
}

TEST(RuntimeBuild, EnvironmentOverridesTheDefaultLibDir) {
  ScratchDir dir;
  make_fake_build(dir.path(), "tensormap_and_ringbuffer");
  ScopedEnv env("SIMPLER_LIB_DIR", dir.path().string());
  EXPECT_EQ(default_lib_dir(), dir.path().string());
  const RuntimeBins bins = find_runtime_build("a2a3sim", "tensormap_and_ringbuffer");
  EXPECT_EQ(bins.sim_context_path, (dir.path() / "libsimpler_sim.so").string());
}

TEST(RuntimeBuild, ARelativeLibDirIsResolvedOnceWhenRead) {
  ScratchDir dir;
  make_fake_build(dir.path() / "builds" / "lib", "tensormap_and_ringbuffer");
  const std::filesystem::path old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path() / "builds");
  // A value no other test used, so this is its first read.
  ScopedEnv env("SIMPLER_LIB_DIR", "./lib/../lib");
  const std::string resolved = default_lib_dir();
  std::filesystem::current_path(dir.path());  // e.g. the framework chdirs before init
  EXPECT_EQ(default_lib_dir(), resolved);
  EXPECT_EQ(resolved, (dir.path() / "builds" / "lib").string());
  const RuntimeBins bins = find_runtime_build("a2a3sim", "tensormap_and_ringbuffer");
  EXPECT_EQ(bins.sim_context_path, (dir.path() / "builds" / "lib" / "libsimpler_sim.so").string());
  std::filesystem::current_path(old_cwd);
  EXPECT_EQ(absolute_lib_dir(""), "");
  EXPECT_EQ(absolute_lib_dir("/abs/x"), "/abs/x");
}

TEST(RuntimeBuild, DefaultLibDirIsTheBuildsLibDirectory) {
  ScopedEnv env("SIMPLER_LIB_DIR", std::nullopt);
  const std::filesystem::path dir = default_lib_dir();
  EXPECT_TRUE(dir.is_absolute()) << dir;
  EXPECT_EQ(dir.filename(), "lib");
}

TEST(RuntimeBuild, AnExplicitLibDirWinsOverTheEnvironment) {
  ScratchDir env_dir;
  ScratchDir explicit_dir;
  make_fake_build(explicit_dir.path(), "tensormap_and_ringbuffer");
  ScopedEnv env("SIMPLER_LIB_DIR", env_dir.path().string());
  const RuntimeBins bins =
      find_runtime_build("a2a3sim", "tensormap_and_ringbuffer", explicit_dir.path().string());
  EXPECT_EQ(bins.sim_context_path, (explicit_dir.path() / "libsimpler_sim.so").string());
}

}  // namespace
}  // namespace simpler
