// "1 tensor", "2 tensors": counts in messages read as the user would write them.
#pragma once

#include <cstdint>
#include <string>

namespace simpler::support {

inline std::string counted(uint64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace simpler::support
