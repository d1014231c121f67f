// KernelCompiler's on-disk cache (internal): private directories, entries that carry the
// digest of their image and of every header the compile read.
//
// An entry is one file, <key>.kentry, written atomically (temp file + rename):
//   simpler-kernel-cache-entry 2\n
//   image <sha256 hex> <byte count>\n
//   dep <sha256 hex> <absolute path>\n      (one per file the compiler read, from -MD)
//   end\n
//   <image bytes>
// A lookup serves the image only when every dep still has the recorded content and the
// image matches its digest; anything else is a miss (the caller recompiles and rewrites).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace simpler::kc {

struct Dependency {
  std::filesystem::path path;  // absolute
  std::string sha256_hex;
};

// Throws KernelCacheError unless `dir` (when it exists) is a directory owned by this user
// and not writable by group or others; a symlink is judged by its target and must itself
// be ours. A missing directory passes (it is created private on the first store).
void check_cache_dir(const std::filesystem::path& dir);
// Creates the missing components of `dir` with mode 0700 (never loosening existing ones).
// Returns false when it cannot.
bool create_private_dirs(const std::filesystem::path& dir);

// The image of `entry` if it is valid and current (see above). Throws KernelCacheError
// when the entry exists but is not ours or is writable by group/others.
std::optional<std::vector<uint8_t>> load_entry(const std::filesystem::path& entry);
// Writes the entry atomically, mode 0600. False on any failure (nothing left behind).
bool store_entry(const std::filesystem::path& entry, const std::vector<uint8_t>& image,
                 const std::vector<Dependency>& deps);

// The files named by a make-style dependency file (gcc/clang -MD -MF), made absolute
// against `base`, with their current content digest; files that cannot be read are
// skipped. `exclude` (the temp source file) is left out.
std::vector<Dependency> read_dependencies(const std::string& make_rule,
                                          const std::filesystem::path& base,
                                          const std::filesystem::path& exclude);

}  // namespace simpler::kc
