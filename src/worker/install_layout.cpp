// Finds the directory of the loaded libsimpler_worker.so through dladdr on one of its own
// symbols, so every default path is relative to where the library really is.
#include "install_layout.h"

#include <dlfcn.h>

#include <system_error>

namespace simpler::layout {
namespace {

// Any address inside this library will do; a function of our own is the simplest.
void anchor() {}

}  // namespace

std::filesystem::path worker_library_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&anchor), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::error_code ec;
  std::filesystem::path library = std::filesystem::canonical(info.dli_fname, ec);
  if (ec) library = std::filesystem::absolute(info.dli_fname, ec);
  return library.parent_path();
}

}  // namespace simpler::layout
