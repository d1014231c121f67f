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

// A failure's prefix: the caller's API when it named one (read only on failure), else
// `own`, the name of the layer that failed ("ChipWorker.free failed").
inline std::string api_name_or(const char* caller_api, const std::string& own) {
  return caller_api ? api_name(caller_api) : own;
}

}  // namespace simpler::detail
