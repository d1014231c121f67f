// The ELF dynamic-symbol reader on real images and on damaged input.
#include "kernel_compiler_elf.h"

#include <gtest/gtest.h>

#include "kernel_sources.h"
#include "simpler/worker/kernel_compiler.h"

namespace simpler::kc {
namespace {

std::vector<uint8_t> probe_image() {
  KernelCompilerOptions options;
  options.use_cache = false;
  return KernelCompiler(options).compile_kernel(test::kProbeKernel, CoreType::AIV);
}

TEST(ElfSymbols, FindsDefinedAndIgnoresUndefinedSymbols) {
  const std::vector<uint8_t> image = probe_image();
  std::string error;
  EXPECT_TRUE(elf_defines_symbol(image, "kernel_entry", &error));
  EXPECT_EQ(error, "");
  EXPECT_FALSE(elf_defines_symbol(image, "kernel_main", &error));
  EXPECT_EQ(error, "");
  // memcpy is referenced (kernel_abi.h) or at least not defined by the image.
  EXPECT_FALSE(elf_defines_symbol(image, "memcpy", &error));

  // The linker puts the section header table last, so every truncation cuts into it:
  // each must be refused as malformed, never read past the end (ASan checks that).
  for (size_t size : {size_t{0}, size_t{3}, size_t{63}, image.size() / 2, image.size() - 1}) {
    std::string truncated_error;
    EXPECT_FALSE(
        elf_defines_symbol(std::span(image.data(), size), "kernel_entry", &truncated_error))
        << size;
    EXPECT_FALSE(truncated_error.empty()) << size;
  }
}

TEST(ElfSymbols, RejectsNonElfInput) {
  std::string error;
  const std::vector<uint8_t> text{'h', 'e', 'l', 'l', 'o'};
  EXPECT_FALSE(elf_defines_symbol(text, "kernel_entry", &error));
  EXPECT_EQ(error, "not an ELF file");
}

}  // namespace
}  // namespace simpler::kc
