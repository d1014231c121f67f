// Loading a shared object from bytes through an anonymous file (memfd_create): nothing is
// ever created in $TMPDIR (a process that dies mid-load leaves no file behind) and a
// noexec /tmp does not matter. dlopen maps it through /proc/self/fd/N.
#include "shared_object.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "support/posix_io.h"

namespace simpler::rt {
namespace {

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

using support::write_all;

}  // namespace

SharedObject::~SharedObject() { release(); }

void SharedObject::release() noexcept {
  if (handle_ != nullptr) {
    dlclose(handle_);
    handle_ = nullptr;
    // Still loaded (e.g. a C++ unique symbol made it NODELETE): the loader keeps matching
    // its name, so the descriptor number must never name another image.
    void* still = dlopen(fd_path(fd_).c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (still != nullptr) {
      dlclose(still);
      fd_ = -1;  // deliberately kept open
      return;
    }
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

SharedObject& SharedObject::operator=(SharedObject&& other) noexcept {
  if (this != &other) {
    release();
    handle_ = other.handle_;
    fd_ = other.fd_;
    other.handle_ = nullptr;
    other.fd_ = -1;
  }
  return *this;
}

bool SharedObject::load(std::span<const uint8_t> bytes, SharedObject* out, std::string* error) {
  if (bytes.empty()) {
    *error = "the image is empty (0 bytes)";
    return false;
  }
  // Sealed against writes before dlopen: the mapped image cannot change under the loader.
  const int fd = ::memfd_create("simpler-image", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = std::string("cannot create an anonymous file for the image (memfd_create): ") +
             std::strerror(errno);
    return false;
  }
  const bool written = write_all(fd, bytes.data(), bytes.size());
  const int write_errno = errno;
  if (!written) {
    ::close(fd);
    *error =
        std::string("cannot write the image to its anonymous file: ") + std::strerror(write_errno);
    return false;
  }
  (void)::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  void* handle = dlopen(fd_path(fd).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* dl_error = dlerror();
    ::close(fd);
    *error = std::string("dlopen failed: ") + (dl_error != nullptr ? dl_error : "unknown error");
    return false;
  }
  *out = SharedObject();
  out->handle_ = handle;
  out->fd_ = fd;
  return true;
}

void* SharedObject::symbol(const char* name) const {
  return handle_ == nullptr ? nullptr : dlsym(handle_, name);
}

}  // namespace simpler::rt
