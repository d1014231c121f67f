// Helpers of the tools tests (ScratchDir and ScopedEnv come from tests/support).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "scratch.h"

namespace simpler::test {

inline void touch(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << "";
}

// Number of entries in `dir` whose name starts with `prefix`.
inline int count_entries(const std::filesystem::path& dir, const std::string& prefix) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

}  // namespace simpler::test
