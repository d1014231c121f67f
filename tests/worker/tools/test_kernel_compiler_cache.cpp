// KernelCompiler's content-addressed cache: hits skip the compiler, keys separate what
// differs, writes are atomic, a damaged entry is rebuilt, an unwritable cache is harmless.
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
  EXPECT_EQ(entries[0].extension(), ".so");
  EXPECT_EQ(entries[0].stem().string().size(), 64u);  // SHA-256 hex
  EXPECT_EQ(std::filesystem::file_size(entries[0]), image.size());
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
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << "\x7f"
                                                                   "ELF truncated";
  EXPECT_EQ(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV), image);
  EXPECT_EQ(compiler.stats().compiler_runs, 2u);
  EXPECT_EQ(std::filesystem::file_size(entries[0]), image.size());
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

}  // namespace
}  // namespace simpler
