// File helpers of KernelCompiler: a private temp directory and atomic writes (internal).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simpler::kc {

// A fresh mode-0700 directory under $TMPDIR (or /tmp), removed with everything in it
// when the object dies, on every path out of a compile.
class TempDir {
 public:
  TempDir();  // throws std::system_error if it cannot be created
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Whole-file reads; nullopt when the file cannot be opened or read.
std::optional<std::vector<uint8_t>> read_file(const std::filesystem::path& path);
std::optional<std::string> read_text_file(const std::filesystem::path& path);
// Writes `data` to `path` (created or truncated); throws std::system_error on failure.
void write_file(const std::filesystem::path& path, std::string_view data);
// Writes a uniquely named temp file in the destination's directory, then rename(2)s it
// over `path`, so readers see either the old file or the complete new one. Returns false
// (and leaves no temp file) on any failure.
bool write_file_atomically(const std::filesystem::path& path, std::span<const uint8_t> data);

}  // namespace simpler::kc
