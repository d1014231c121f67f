// Loading a shared object from bytes through a private, immediately unlinked temp file.
#include "shared_object.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace simpler::rt {
namespace {

std::string temp_dir() {
  const char* dir = std::getenv("TMPDIR");
  return (dir != nullptr && dir[0] != '\0') ? dir : "/tmp";
}

bool write_all(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

SharedObject::~SharedObject() {
  if (handle_ != nullptr) dlclose(handle_);
}

SharedObject& SharedObject::operator=(SharedObject&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

bool SharedObject::load(std::span<const uint8_t> bytes, SharedObject* out, std::string* error) {
  if (bytes.empty()) {
    *error = "the image is empty (0 bytes)";
    return false;
  }
  std::string path_template = temp_dir() + "/simpler-image-XXXXXX";
  std::vector<char> path(path_template.begin(), path_template.end());
  path.push_back('\0');
  const int fd = mkstemp(path.data());  // creates the file with mode 0600
  if (fd < 0) {
    *error = "cannot create a temp file in " + temp_dir() + ": " + std::strerror(errno) +
             " (set TMPDIR to a writable directory)";
    return false;
  }
  const bool written = write_all(fd, bytes.data(), bytes.size());
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    ::unlink(path.data());
    *error = std::string("cannot write the image to a temp file: ") +
             std::strerror(written ? errno : write_errno);
    return false;
  }
  void* handle = dlopen(path.data(), RTLD_NOW | RTLD_LOCAL);
  const char* dl_error = handle == nullptr ? dlerror() : nullptr;
  ::unlink(path.data());  // the mapping keeps the file alive; the name goes now
  if (handle == nullptr) {
    *error = std::string("dlopen failed: ") + (dl_error != nullptr ? dl_error : "unknown error");
    return false;
  }
  *out = SharedObject();
  out->handle_ = handle;
  return true;
}

void* SharedObject::symbol(const char* name) const {
  return handle_ == nullptr ? nullptr : dlsym(handle_, name);
}

}  // namespace simpler::rt
