// KernelCompiler's content-addressed cache: hits skip the compiler, keys separate what
// differs, writes are atomic, a damaged entry is rebuilt, an unwritable cache is harmless.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "kernel_sources.h"
#include "simpler/worker/kernel_compiler.h"
#include "test_support.h"

namespace simpler {
namespace {

using test::ScratchDir;

KernelCompilerOptions cached_in(const std::filesystem::path& dir) {
  KernelCompilerOptions o;
  o.cache_dir = dir.string();
  return o;
}

std::vector<std::filesystem::path> cache_entries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries.push_back(e.path());
  return entries;
}

TEST(KernelCompilerCache, SecondCompileIsServedFromTheCache) {
  ScratchDir cache;
  KernelCompiler compiler(cached_in(cache.path() / "nested" / "kernels"));
  const auto first = compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  const auto second = compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  EXPECT_EQ(first, second);
  EXPECT_EQ(compiler.stats().compiler_runs, 1u);
  EXPECT_EQ(compiler.stats().cache_hits, 1u);
  EXPECT_EQ(compiler.stats().cache_write_failures, 0u);

  // Another compiler (another process, in effect) sharing the directory never compiles.
  KernelCompiler other(cached_in(cache.path() / "nested" / "kernels"));
  EXPECT_EQ(other.compile_kernel(test::kProbeKernel, CoreType::AIV), first);
  EXPECT_EQ(other.stats().compiler_runs, 0u);
  EXPECT_EQ(other.stats().cache_hits, 1u);
}

TEST(KernelCompilerCache, CoreTypeFlagsAndSourceAreAllPartOfTheKey) {
  ScratchDir cache;
  KernelCompiler compiler(cached_in(cache.path()));
  compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  compiler.compile_kernel(test::kProbeKernel, CoreType::AIC);
  compiler.compile_kernel(std::string(test::kProbeKernel) + "\n// changed\n", CoreType::AIV);
  KernelCompilerOptions flagged = cached_in(cache.path());
  flagged.extra_flags = {"-DSOMETHING_ELSE"};
  KernelCompiler other(flagged);
  other.compile_kernel(test::kProbeKernel, CoreType::AIV);
  EXPECT_EQ(compiler.stats().compiler_runs, 3u);
  EXPECT_EQ(compiler.stats().cache_hits, 0u);
  EXPECT_EQ(other.stats().compiler_runs, 1u);
  EXPECT_EQ(cache_entries(cache.path()).size(), 4u);
}

TEST(KernelCompilerCache, WritesLeaveOnlyCompleteEntries) {
  ScratchDir cache;
  KernelCompiler compiler(cached_in(cache.path()));
  const auto image = compiler.compile_orchestration(test::kOrchestration, "build_graph");
  const auto entries = cache_entries(cache.path());
  ASSERT_EQ(entries.size(), 1u);  // no leftover *.tmp.* file
  EXPECT_EQ(entries[0].extension(), ".kentry");
  EXPECT_EQ(entries[0].stem().string().size(), 64u);                // SHA-256 hex
  EXPECT_GT(std::filesystem::file_size(entries[0]), image.size());  // header + image
  struct stat info {};
  ASSERT_EQ(::stat(entries[0].c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
}

TEST(KernelCompilerCache, FailedCompilesAreNotCached) {
  ScratchDir cache;
  KernelCompiler compiler(cached_in(cache.path()));
  EXPECT_THROW(compiler.compile_kernel(test::kKernelWithSyntaxError, CoreType::AIV),
               KernelCompileError);
  EXPECT_THROW(compiler.compile_kernel(test::kKernelWithoutEntry, CoreType::AIV),
               KernelCompileError);
  EXPECT_THROW(compiler.compile_kernel(test::kKernelWithoutEntry, CoreType::AIV),
               KernelCompileError);
  EXPECT_EQ(compiler.stats().compiler_runs, 3u);
  EXPECT_EQ(test::count_entries(cache.path(), ""), 0);
}

TEST(KernelCompilerCache, DamagedEntryIsRebuilt) {
  ScratchDir cache;
  KernelCompiler compiler(cached_in(cache.path()));
  const auto image = compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  const auto entries = cache_entries(cache.path());
  ASSERT_EQ(entries.size(), 1u);
  const auto good_size = std::filesystem::file_size(entries[0]);
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << "\x7f"
                                                                   "ELF truncated";
  EXPECT_EQ(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV), image);
  EXPECT_EQ(compiler.stats().compiler_runs, 2u);
  EXPECT_EQ(std::filesystem::file_size(entries[0]), good_size);
}

TEST(KernelCompilerCache, UnwritableCacheStillReturnsTheImage) {
  ScratchDir scratch;
  const auto blocker = scratch.path() / "not-a-directory";
  std::ofstream(blocker) << "x";
  KernelCompiler compiler(cached_in(blocker / "kernels"));
  EXPECT_FALSE(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV).empty());
  EXPECT_EQ(compiler.stats().cache_write_failures, 1u);
}

TEST(KernelCompilerCache, ConcurrentCompilesShareOneCompleteEntry) {
  ScratchDir cache;
  KernelCompiler compiler(cached_in(cache.path()));
  std::vector<uint8_t> images[3];
  std::vector<std::thread> threads;
  for (auto& image : images)
    threads.emplace_back(
        [&] { image = compiler.compile_kernel(test::kProbeKernel, CoreType::AIV); });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(images[0].empty());
  EXPECT_EQ(images[0], images[1]);
  EXPECT_EQ(images[0], images[2]);
  const KernelCompilerStats stats = compiler.stats();
  EXPECT_EQ(stats.compiler_runs + stats.cache_hits, 3u);
  EXPECT_EQ(stats.cache_write_failures, 0u);
  EXPECT_EQ(cache_entries(cache.path()).size(), 1u);  // racing renames leave one entry, no temps
}

TEST(KernelCompilerCache, DisabledCacheNeverTouchesTheDirectory) {
  ScratchDir scratch;
  KernelCompilerOptions options = cached_in(scratch.path() / "cache");
  options.use_cache = false;
  KernelCompiler compiler(options);
  compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  EXPECT_EQ(compiler.stats().compiler_runs, 2u);
  EXPECT_FALSE(std::filesystem::exists(scratch.path() / "cache"));
}

std::filesystem::path only_entry(const std::filesystem::path& dir) {
  const auto entries = cache_entries(dir);
  EXPECT_EQ(entries.size(), 1u);
  return entries.empty() ? std::filesystem::path() : entries[0];
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

constexpr const char* kKernelWithHeader = R"(
#include "simpler/kernel/kernel_abi.h"
#include "user_value.h"
extern "C" void kernel_entry(int64_t* args) {
  int32_t* out = (int32_t*)simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(int32_t));
  out[0] = USER_VALUE;
}
)";

TEST(KernelCompilerCache, EditingAnIncludedUserHeaderMissesTheCache) {
  ScratchDir scratch;
  const auto include = scratch.path() / "include";
  std::filesystem::create_directories(include);
  write_text(include / "user_value.h", "#define USER_VALUE 1\n");
  KernelCompilerOptions options = cached_in(scratch.path() / "cache");
  options.include_dirs = {include.string()};
  KernelCompiler compiler(options);
  const auto first = compiler.compile_kernel(kKernelWithHeader, CoreType::AIV);
  EXPECT_EQ(compiler.compile_kernel(kKernelWithHeader, CoreType::AIV), first);  // unchanged: hit
  EXPECT_EQ(compiler.stats().cache_hits, 1u);
  write_text(include / "user_value.h", "#define USER_VALUE 2\n");
  const auto second = compiler.compile_kernel(kKernelWithHeader, CoreType::AIV);
  EXPECT_NE(second, first);  // the stale image is never served
  EXPECT_EQ(compiler.stats().compiler_runs, 2u);
  // The entry now records the new header: the next compile hits again.
  EXPECT_EQ(compiler.compile_kernel(kKernelWithHeader, CoreType::AIV), second);
  EXPECT_EQ(compiler.stats().cache_hits, 2u);
  // A header that disappears misses too (here: the compile then fails, naming it).
  std::filesystem::remove(include / "user_value.h");
  EXPECT_THROW(compiler.compile_kernel(kKernelWithHeader, CoreType::AIV), KernelCompileError);
}

TEST(KernelCompilerCache, AnEntryWhoseImageDoesNotMatchItsDigestIsRebuilt) {
  ScratchDir cache;
  KernelCompiler compiler(cached_in(cache.path()));
  const auto image = compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  const auto entry = only_entry(cache.path());
  std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(-20, std::ios::end);  // inside the image, past the header
  f.put('\x55');
  f.close();
  EXPECT_EQ(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV), image);
  EXPECT_EQ(compiler.stats().compiler_runs, 2u);
  EXPECT_EQ(compiler.stats().cache_hits, 0u);
}

TEST(KernelCompilerCache, DirectoriesAreCreatedPrivate) {
  ScratchDir scratch;
  const mode_t old_umask = ::umask(0);  // even a permissive umask gives 0700
  KernelCompiler compiler(cached_in(scratch.path() / "a" / "b"));
  compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  ::umask(old_umask);
  for (const auto& dir : {scratch.path() / "a", scratch.path() / "a" / "b"}) {
    struct stat info {};
    ASSERT_EQ(::stat(dir.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0700u) << dir;
  }
}

TEST(KernelCompilerCache, AGroupOrWorldWritableCacheDirIsRefused) {
  ScratchDir scratch;
  const auto dir = scratch.path() / "shared";
  std::filesystem::create_directories(dir);
  KernelCompiler compiler(cached_in(dir));
  for (mode_t mode : {0777, 0770, 0702}) {
    ::chmod(dir.c_str(), mode);
    try {
      compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
      ADD_FAILURE() << "accepted a cache directory of mode " << std::oct << mode;
    } catch (const KernelCacheError& e) {
      EXPECT_NE(std::string(e.what()).find("writable by group or others"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("chmod 700"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(compiler.stats().compiler_runs, 0u);  // refused before anything else
  ::chmod(dir.c_str(), 0700);
  EXPECT_NO_THROW(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV));
}

TEST(KernelCompilerCache, EntriesAndDirectoriesOfAnotherUserAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  ScratchDir scratch;
  const auto dir = scratch.path() / "cache";
  KernelCompiler compiler(cached_in(dir));
  compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  const auto entry = only_entry(dir);
  ASSERT_EQ(::chown(entry.c_str(), 12345, 12345), 0);  // "planted" by another user
  try {
    compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
    ADD_FAILURE() << "served an entry owned by another user";
  } catch (const KernelCacheError& e) {
    EXPECT_NE(std::string(e.what()).find("owned by uid 12345"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rm "), std::string::npos) << e.what();
  }
  ASSERT_EQ(::chown(entry.c_str(), 0, 0), 0);
  ::chmod(entry.c_str(), 0666);
  EXPECT_THROW(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV), KernelCacheError);
  ::chmod(entry.c_str(), 0600);
  ASSERT_EQ(::chown(dir.c_str(), 12345, 12345), 0);
  EXPECT_THROW(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV), KernelCacheError);
  ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
  EXPECT_NO_THROW(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV));
}

bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

TEST(KernelCompilerTimeout, AHungCompilerIsKilledWithItsWholeProcessGroup) {
  ScratchDir scratch;
  // A "compiler" that starts a child (like cc1plus) and waits for it forever.
  const auto fake = scratch.path() / "hung-cc";
  const auto pid_file = scratch.path() / "child.pid";
  write_text(fake, "#!/bin/sh\nsleep 300 &\necho $! > " + pid_file.string() + "\nwait\n");
  ::chmod(fake.c_str(), 0755);
  KernelCompilerOptions options = cached_in(scratch.path() / "cache");
  options.compiler = fake.string();
  options.timeout_seconds = 0.5;
  KernelCompiler compiler(options);
  EXPECT_EQ(compiler.timeout_seconds(), 0.5);
  const auto start = std::chrono::steady_clock::now();
  try {
    compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
    ADD_FAILURE() << "a hung compiler returned";
  } catch (const KernelCompileError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out after"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("process group was killed"), std::string::npos);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  std::ifstream in(pid_file);
  pid_t child = 0;
  ASSERT_TRUE(in >> child) << "the fake compiler did not start its child";
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = process_gone(child);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the compiler's child " << child << " survived the timeout";
  if (!gone) ::kill(child, SIGKILL);
}

TEST(KernelCompilerTimeout, DefaultAndEnvironmentAndBadValues) {
  ScratchDir scratch;
  {
    test::ScopedEnv unset("SIMPLER_KERNEL_COMPILE_TIMEOUT", std::nullopt);
    EXPECT_EQ(KernelCompiler(cached_in(scratch.path())).timeout_seconds(),
              kDefaultCompileTimeoutSeconds);
  }
  {
    test::ScopedEnv env("SIMPLER_KERNEL_COMPILE_TIMEOUT", "7.5");
    EXPECT_EQ(KernelCompiler(cached_in(scratch.path())).timeout_seconds(), 7.5);
    KernelCompilerOptions explicit_option = cached_in(scratch.path());
    explicit_option.timeout_seconds = 3;
    EXPECT_EQ(KernelCompiler(explicit_option).timeout_seconds(), 3.0);  // the option wins
  }
  for (const char* bad : {"0", "-1", "soon", "5s"}) {
    test::ScopedEnv env("SIMPLER_KERNEL_COMPILE_TIMEOUT", bad);
    EXPECT_THROW(KernelCompiler{cached_in(scratch.path())}, std::invalid_argument) << bad;
  }
  KernelCompilerOptions negative = cached_in(scratch.path());
  negative.timeout_seconds = -2;
  EXPECT_THROW(KernelCompiler{negative}, std::invalid_argument);
}

}  // namespace
}  // namespace simpler
