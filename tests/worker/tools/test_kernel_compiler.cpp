// KernelCompiler: flags and headers the image sees, entry checks, compiler errors, temp
// directory hygiene.
#include "simpler/worker/kernel_compiler.h"

#include <dlfcn.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_sources.h"
#include "test_support.h"

namespace simpler {
namespace {

using test::ScopedEnv;
using test::ScratchDir;
using ::testing::HasSubstr;

KernelCompilerOptions uncached() {
  KernelCompilerOptions o;
  o.use_cache = false;
  return o;
}

// Loads an image the way a runtime would (from bytes via a file) and unloads it at exit.
class LoadedImage {
 public:
  explicit LoadedImage(const std::vector<uint8_t>& image) {
    path_ = dir_.path() / "image.so";
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.data()),
               static_cast<std::streamsize>(image.size()));
    handle_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  ~LoadedImage() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  void* symbol(const char* name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

 private:
  test::ScratchDir dir_;
  std::filesystem::path path_;
  void* handle_ = nullptr;
};

// Runs the probe kernel with one int32[2] tensor and scalar 40 at block index 2.
std::vector<int32_t> run_probe(const std::vector<uint8_t>& image) {
  LoadedImage loaded(image);
  auto entry =
      reinterpret_cast<simpler_kernel_entry_fn>(loaded.symbol(SIMPLER_KERNEL_ENTRY_SYMBOL));
  if (entry == nullptr) return {};
  std::vector<int32_t> out(2, 0);
  ChipTensor tensor{};
  tensor.buffer.addr = reinterpret_cast<uint64_t>(out.data());
  tensor.buffer.size = out.size() * sizeof(int32_t);
  tensor.ndims = 1;
  tensor.dtype = CHIP_DT_INT32;
  tensor.shapes[0] = 2;
  tensor.strides[0] = 1;
  SimplerKernelContext context{};
  context.block_idx = 2;
  context.block_num = 4;
  int64_t slots[3] = {reinterpret_cast<int64_t>(&context), reinterpret_cast<int64_t>(&tensor), 40};
  entry(slots + 1);  // args[-1] is the kernel context
  return out;
}

TEST(CoreTypeNames, RoundTrip) {
  EXPECT_STREQ(core_type_name(CoreType::AIC), "aic");
  EXPECT_STREQ(core_type_name(CoreType::AIV), "aiv");
  EXPECT_EQ(core_type_from_name("aic"), CoreType::AIC);
  EXPECT_EQ(core_type_from_name("AIV"), CoreType::AIV);
  EXPECT_EQ(core_type_from_name("cube"), std::nullopt);
  EXPECT_EQ(core_type_from_name(""), std::nullopt);
}

TEST(KernelCompiler, DefaultsComeFromTheBuild) {
  ScopedEnv cache("SIMPLER_CACHE_DIR", "/some/cache");
  KernelCompiler compiler;
  EXPECT_EQ(compiler.compiler(), default_kernel_compiler());
  EXPECT_FALSE(compiler.compiler().empty());
  EXPECT_EQ(compiler.cache_dir(), "/some/cache");
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(kernel_include_dir()) /
                                      "simpler/kernel/kernel_abi.h"));
}

TEST(KernelCompiler, CacheDirFallsBackToHome) {
  ScopedEnv cache("SIMPLER_CACHE_DIR", std::nullopt);
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(default_kernel_cache_dir(), "/home/someone/.cache/simpler/kernels");
}

TEST(KernelCompiler, NoCacheDirAnywhereIsRefusedUnlessTheCacheIsOff) {
  ScopedEnv cache("SIMPLER_CACHE_DIR", std::nullopt);
  ScopedEnv home("HOME", std::nullopt);
  try {
    KernelCompiler compiler;
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("SIMPLER_CACHE_DIR"));
  }
  EXPECT_NO_THROW(KernelCompiler{uncached()});
}

TEST(KernelCompiler, KernelSeesItsCoreTypeMacroAndTheAbi) {
  KernelCompiler compiler(uncached());
  const std::vector<int32_t> aiv =
      run_probe(compiler.compile_kernel(test::kProbeKernel, CoreType::AIV));
  EXPECT_EQ(aiv, (std::vector<int32_t>{200, 42}));
  const std::vector<int32_t> aic =
      run_probe(compiler.compile_kernel(test::kProbeKernel, CoreType::AIC));
  EXPECT_EQ(aic, (std::vector<int32_t>{100, 42}));
  EXPECT_EQ(compiler.stats().compiler_runs, 2u);
}

TEST(KernelCompiler, KernelWithoutEntryIsRefusedNamingIt) {
  KernelCompiler compiler(uncached());
  try {
    compiler.compile_kernel(test::kKernelWithoutEntry, CoreType::AIV);
    FAIL() << "expected KernelCompileError";
  } catch (const KernelCompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel_entry"));
    EXPECT_THAT(e.what(), HasSubstr("does not export"));
  }
}

TEST(KernelCompiler, CompilerErrorCarriesItsDiagnostics) {
  KernelCompiler compiler(uncached());
  try {
    compiler.compile_kernel(test::kKernelWithSyntaxError, CoreType::AIV);
    FAIL() << "expected KernelCompileError";
  } catch (const KernelCompileError& e) {
    EXPECT_THAT(e.compiler_stderr(), HasSubstr("error"));
    EXPECT_THAT(e.compiler_stderr(), HasSubstr("source.cpp"));
    EXPECT_THAT(e.what(), HasSubstr("compilation failed"));
    EXPECT_THAT(e.what(), HasSubstr(e.compiler_stderr().substr(0, 40)));
  }
}

TEST(KernelCompiler, UnrunnableCompilerIsACompileError) {
  KernelCompilerOptions options = uncached();
  options.compiler = "/nonexistent/bin/c++";
  KernelCompiler compiler(options);
  try {
    compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
    FAIL() << "expected KernelCompileError";
  } catch (const KernelCompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/bin/c++"));
    EXPECT_TRUE(e.compiler_stderr().empty());
  }
}

TEST(KernelCompiler, UndefinedReferencesFailAtCompileTime) {
  KernelCompiler compiler(uncached());
  const char* source = R"(
    extern "C" int helper_nobody_defines(int);
    extern "C" void kernel_entry(long* args) { args[0] = helper_nobody_defines(1); }
  )";
  try {
    compiler.compile_kernel(source, CoreType::AIV);
    FAIL() << "expected KernelCompileError";
  } catch (const KernelCompileError& e) {
    EXPECT_THAT(e.compiler_stderr(), HasSubstr("helper_nobody_defines"));
  }
}

TEST(KernelCompiler, OrchestrationEntryIsCheckedWhenNamed) {
  KernelCompiler compiler(uncached());
  const std::vector<uint8_t> image =
      compiler.compile_orchestration(test::kOrchestration, "build_graph");
  LoadedImage loaded(image);
  EXPECT_NE(loaded.symbol("build_graph"), nullptr);
  try {
    compiler.compile_orchestration(test::kOrchestration, "orchestrate");
    FAIL() << "expected KernelCompileError";
  } catch (const KernelCompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'orchestrate'"));
  }
  EXPECT_FALSE(compiler.compile_orchestration(test::kOrchestration).empty());
}

TEST(KernelCompiler, ExtraIncludeDirsAndFlagsReachTheCompiler) {
  ScratchDir headers;
  std::ofstream(headers.path() / "my_constants.h") << "#define MY_OFFSET 5\n";
  KernelCompilerOptions options = uncached();
  options.include_dirs = {headers.path().string()};
  options.extra_flags = {"-DMY_SCALE=3"};
  KernelCompiler compiler(options);
  const char* source = R"(
    #include "my_constants.h"
    #include "simpler/kernel/kernel_abi.h"
    extern "C" void kernel_entry(int64_t* args) {
      int32_t* out = (int32_t*)simpler_tensor_data(simpler_tensor_arg(args, 0), 4);
      out[0] = MY_SCALE; out[1] = MY_OFFSET;
    }
  )";
  EXPECT_EQ(run_probe(compiler.compile_kernel(source, CoreType::AIV)),
            (std::vector<int32_t>{3, 5}));
}

TEST(KernelCompiler, TempDirectoriesAreRemovedOnSuccessAndFailure) {
  ScratchDir tmp;
  ScopedEnv env("TMPDIR", tmp.path().string());
  KernelCompiler compiler(uncached());
  compiler.compile_kernel(test::kProbeKernel, CoreType::AIV);
  EXPECT_THROW(compiler.compile_kernel(test::kKernelWithSyntaxError, CoreType::AIV),
               KernelCompileError);
  EXPECT_THROW(compiler.compile_kernel(test::kKernelWithoutEntry, CoreType::AIV),
               KernelCompileError);
  EXPECT_EQ(test::count_entries(tmp.path(), "simpler-kc-"), 0);
}

}  // namespace
}  // namespace simpler
