// KernelCompiler: source -> simulator image bytes, through the system compiler and a
// content-addressed on-disk cache.
#include "simpler/worker/kernel_compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "install_layout.h"
#include "kernel_compiler_cache.h"
#include "kernel_compiler_elf.h"
#include "kernel_compiler_files.h"
#include "kernel_compiler_process.h"
#include "task_interface/sha256.h"

#ifndef SIMPLER_CXX
#error "SIMPLER_CXX must be defined by the build (src/worker/CMakeLists.txt)"
#endif

namespace simpler {
namespace {

// Bump when the meaning of a cache entry changes (flags layout, checks).
constexpr std::string_view kCacheFormat = "simpler-kernel-cache-v2";
// Compiler output quoted in an exception message; the full text stays in .stderr.
constexpr size_t kMessageOutputLimit = 8000;

// simpler headers every image may include; their content is part of the cache key.
constexpr const char* kAbiHeaders[] = {"simpler/abi/chip_types.h", "simpler/abi/status.h",
                                       "simpler/kernel/kernel_abi.h",
                                       "simpler/orch/orchestration_api.h"};

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// The compiler's resolved path, size and mtime: a different or upgraded compiler must
// not hit entries of the old one.
std::string compiler_identity(const std::string& compiler) {
  std::string resolved = compiler;
  if (compiler.find('/') == std::string::npos) {
    const std::string path = env_or_empty("PATH");
    size_t start = 0;
    while (start <= path.size()) {
      const size_t end = std::min(path.find(':', start), path.size());
      const std::filesystem::path candidate =
          std::filesystem::path(path.substr(start, end - start)) / compiler;
      if (::access(candidate.c_str(), X_OK) == 0) {
        resolved = candidate.string();
        break;
      }
      start = end + 1;
    }
  }
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(resolved, ec);
  if (!ec) resolved = canonical.string();
  struct stat info {};
  if (::stat(resolved.c_str(), &info) != 0) return resolved;  // spawning will report it
  return resolved + "|" + std::to_string(info.st_size) + "|" + std::to_string(info.st_mtim.tv_sec) +
         "." + std::to_string(info.st_mtim.tv_nsec);
}

std::string digest_headers(const std::string& include_dir) {
  sha::Sha256 hash;
  for (const char* header : kAbiHeaders) {
    hash.update_field(header);
    hash.update_field(
        kc::read_text_file(std::filesystem::path(include_dir) / header).value_or("<missing>"));
  }
  return hash.finish_hex();
}

// inf (or any huge value) means "no limit": clamped to ~30 years, so the deadline
// now + timeout fits steady_clock (inf overflowed it and timed out at once).
constexpr double kNoCompileTimeoutSeconds = 1e9;

double resolve_timeout(double option) {
  if (option < 0 || option != option) {
    throw std::invalid_argument("KernelCompiler: timeout_seconds must be > 0 (0 = default), got " +
                                std::to_string(option));
  }
  if (option > 0) return std::min(option, kNoCompileTimeoutSeconds);
  const std::string env = env_or_empty("SIMPLER_KERNEL_COMPILE_TIMEOUT");
  if (env.empty()) return kDefaultCompileTimeoutSeconds;
  char* end = nullptr;
  const double seconds = std::strtod(env.c_str(), &end);
  if (end == env.c_str() || *end != '\0' || !(seconds > 0)) {
    throw std::invalid_argument("SIMPLER_KERNEL_COMPILE_TIMEOUT='" + env +
                                "' is not a number of seconds > 0");
  }
  return std::min(seconds, kNoCompileTimeoutSeconds);
}

std::string quoted_output(const std::string& output) {
  if (output.empty()) return "(the compiler printed nothing)";
  if (output.size() <= kMessageOutputLimit) return output;
  return output.substr(0, kMessageOutputLimit) + "\n... (truncated; see .stderr for the rest)";
}

// A cache entry is usable when it is an ELF shared object defining the required symbol.
bool image_is_usable(const std::vector<uint8_t>& image, std::string_view required_symbol) {
  std::string error;
  if (required_symbol.empty()) {
    kc::elf_defines_symbol(image, "", &error);
    return error.empty();
  }
  return kc::elf_defines_symbol(image, required_symbol, &error);
}

}  // namespace

std::string default_kernel_compiler() {
  // The compiler that built simpler when it is still there (same ABI), else the system's
  // (an installed package may run on a machine without that exact path).
  std::error_code ec;
  if (std::filesystem::exists(SIMPLER_CXX, ec)) return SIMPLER_CXX;
  return "c++";
}

std::string kernel_include_dir() {
  // $SIMPLER_INCLUDE_DIR, else include/ next to the lib/ directory of libsimpler_worker.so
  // (the build mirrors include/ into the build tree; a package installs it beside lib/).
  std::string configured = env_or_empty("SIMPLER_INCLUDE_DIR");
  if (!configured.empty()) return configured;
  return (layout::worker_library_dir().parent_path() / "include").string();
}

std::string default_kernel_cache_dir() {
  std::string configured = env_or_empty("SIMPLER_CACHE_DIR");
  if (!configured.empty()) return configured;
  const std::string home = env_or_empty("HOME");
  if (home.empty()) return {};
  return (std::filesystem::path(home) / ".cache" / "simpler" / "kernels").string();
}

KernelCompiler::KernelCompiler(KernelCompilerOptions options) : options_(std::move(options)) {
  if (options_.compiler.empty()) options_.compiler = default_kernel_compiler();
  if (options_.use_cache && options_.cache_dir.empty()) {
    options_.cache_dir = default_kernel_cache_dir();
    if (options_.cache_dir.empty()) {
      throw std::invalid_argument(
          "KernelCompiler: no cache directory: pass cache_dir, set SIMPLER_CACHE_DIR or "
          "HOME, or disable the cache (use_cache=false)");
    }
  }
  options_.timeout_seconds = resolve_timeout(options_.timeout_seconds);
  compiler_identity_ = compiler_identity(options_.compiler);
  headers_digest_ = digest_headers(kernel_include_dir());
}

KernelCompilerStats KernelCompiler::stats() const {
  KernelCompilerStats s;
  s.compiler_runs = compiler_runs_.load();
  s.cache_hits = cache_hits_.load();
  s.cache_write_failures = cache_write_failures_.load();
  return s;
}

std::vector<std::string> KernelCompiler::flags_for(ImageKind kind,
                                                   std::optional<CoreType> core) const {
  std::vector<std::string> flags{
      "-std=c++17", "-O2", "-fPIC", "-shared", "-Wl,--no-undefined", "-I" + kernel_include_dir()};
  for (const std::string& dir : options_.include_dirs) flags.push_back("-I" + dir);
  if (kind == ImageKind::Kernel) {
    flags.push_back(*core == CoreType::AIC   ? "-DSIMPLER_KERNEL_AIC"
                    : *core == CoreType::AIV ? "-DSIMPLER_KERNEL_AIV"
                                             : "-DSIMPLER_KERNEL_MIX");
  } else {
    flags.push_back("-DSIMPLER_ORCHESTRATION");
  }
  flags.insert(flags.end(), options_.extra_flags.begin(), options_.extra_flags.end());
  return flags;
}

std::vector<uint8_t> KernelCompiler::compile_kernel(std::string_view source, CoreType core) const {
  return compile(source, ImageKind::Kernel, core, SIMPLER_KERNEL_ENTRY_SYMBOL);
}

std::vector<uint8_t> KernelCompiler::compile_orchestration(std::string_view source,
                                                           std::string_view entry) const {
  return compile(source, ImageKind::Orchestration, std::nullopt, entry);
}

std::vector<uint8_t> KernelCompiler::compile(std::string_view source, ImageKind kind,
                                             std::optional<CoreType> core,
                                             std::string_view required_symbol) const {
  const std::vector<std::string> flags = flags_for(kind, core);
  const char* what = kind == ImageKind::Kernel ? "kernel" : "orchestration";

  sha::Sha256 key_hash;
  key_hash.update_field(kCacheFormat);
  key_hash.update_field(compiler_identity_);
  for (const std::string& flag : flags) key_hash.update_field(flag);
  key_hash.update_field(what);
  key_hash.update_field(core ? core_type_name(*core) : "-");
  key_hash.update_field(required_symbol);
  key_hash.update_field(headers_digest_);
  key_hash.update_field(source);
  const std::string key = key_hash.finish_hex();
  const std::filesystem::path cache_dir(options_.cache_dir);
  const std::filesystem::path cached =
      options_.use_cache ? cache_dir / (key + ".kentry") : std::filesystem::path();

  if (options_.use_cache) {
    kc::check_cache_dir(cache_dir);  // throws KernelCacheError: nothing is read from it
    if (auto image = kc::load_entry(cached); image && image_is_usable(*image, required_symbol)) {
      ++cache_hits_;
      return std::move(*image);
    }
  }

  std::vector<uint8_t> image;
  std::vector<kc::Dependency> deps;
  std::string compiler_output;
  {
    kc::TempDir temp;  // removed on every path out of this block
    const std::filesystem::path source_file = temp.path() / "source.cpp";
    const std::filesystem::path output_file = temp.path() / "image.so";
    const std::filesystem::path deps_file = temp.path() / "image.d";
    kc::write_file(source_file, source);

    std::vector<std::string> argv{options_.compiler};
    argv.insert(argv.end(), flags.begin(), flags.end());
    // -MD: the files the compile read, so the cache entry can check them on a lookup.
    argv.insert(argv.end(), {"-MD", "-MF", deps_file.string(), "-o", output_file.string(),
                             source_file.string()});
    ++compiler_runs_;
    kc::ProcessResult run =
        kc::run_process(argv, temp.path() / "compiler.log", options_.timeout_seconds);
    compiler_output = std::move(run.output);
    if (run.timed_out) {
      throw KernelCompileError(
          std::string(what) + " compilation timed out after " +
              std::to_string(options_.timeout_seconds) +
              " s; the compiler's process group was killed (raise timeout_seconds or "
              "SIMPLER_KERNEL_COMPILE_TIMEOUT if the source is just slow to build):\n" +
              quoted_output(compiler_output),
          compiler_output);
    }
    if (!run.started) {
      throw KernelCompileError(std::string("cannot compile the ") + what + ": " + compiler_output +
                                   " (set the compiler option to a working C++ compiler)",
                               "");
    }
    if (run.exit_code != 0) {
      throw KernelCompileError(std::string(what) + " compilation failed (" + options_.compiler +
                                   " exited with status " + std::to_string(run.exit_code) + "):\n" +
                                   quoted_output(compiler_output),
                               compiler_output);
    }
    auto produced = kc::read_file(output_file);
    if (!produced) {
      throw KernelCompileError(
          std::string("the compiler reported success but wrote no ") + what + " image",
          compiler_output);
    }
    image = std::move(*produced);
    if (options_.use_cache) {
      std::error_code ec;
      const std::filesystem::path cwd = std::filesystem::current_path(ec);
      deps = kc::read_dependencies(kc::read_text_file(deps_file).value_or(""), cwd, source_file);
    }
  }

  std::string elf_error;
  const bool has_symbol = kc::elf_defines_symbol(image, required_symbol, &elf_error);
  if (!elf_error.empty()) {
    throw KernelCompileError(
        std::string("the compiled ") + what + " image is unusable: " + elf_error, compiler_output);
  }
  if (!required_symbol.empty() && !has_symbol) {
    const std::string hint =
        kind == ImageKind::Kernel
            ? "define it as: extern \"C\" void kernel_entry(int64_t* args) { ... }"
            : "define it as: extern \"C\" int " + std::string(required_symbol) +
                  "(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) { ... }";
    throw KernelCompileError(std::string("the ") + what + " source does not export '" +
                                 std::string(required_symbol) + "'; " + hint,
                             compiler_output);
  }

  if (options_.use_cache) {
    kc::check_cache_dir(cache_dir);  // it may have appeared meanwhile
    if (!kc::create_private_dirs(cache_dir) || !kc::store_entry(cached, image, deps)) {
      ++cache_write_failures_;
    }
  }
  return image;
}

}  // namespace simpler
