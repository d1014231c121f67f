// The name an error message starts with: the API the user called (internal).
#pragma once

#include <string>

namespace simpler::detail {

// "Worker.<api>", or `api` itself when it names its own class ("KernelLaunch.launch",
// "RunHandle.wait").
inline std::string api_name(const char* api) {
  const std::string name(api);
  return name.find('.') == std::string::npos ? "Worker." + name : name;
}

}  // namespace simpler::detail
