// simpler runtime — a shared object loaded from bytes (internal).
//
// The bytes are written to an anonymous file (memfd_create, sealed against writes) and
// dlopen'ed RTLD_NOW | RTLD_LOCAL through /proc/self/fd/N: no file is ever created in
// $TMPDIR (nothing is left behind by a process that dies mid-load) and a noexec /tmp does
// not matter. The descriptor stays open while the object is loaded, so its number (part
// of the name the loader matches) cannot be reused for another image meanwhile; an
// object the loader refuses to unload keeps its descriptor for the process's life.
// dlclose on destruction.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace simpler::rt {

class SharedObject {
 public:
  SharedObject() = default;
  ~SharedObject();
  SharedObject(SharedObject&& other) noexcept : handle_(other.handle_), fd_(other.fd_) {
    other.handle_ = nullptr;
    other.fd_ = -1;
  }
  SharedObject& operator=(SharedObject&& other) noexcept;
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  // False with `error` naming the step that failed (anonymous file, write, dlopen).
  static bool load(std::span<const uint8_t> bytes, SharedObject* out, std::string* error);
  // nullptr if the object does not export `name`.
  void* symbol(const char* name) const;
  bool loaded() const { return handle_ != nullptr; }

 private:
  void release() noexcept;  // dlclose, then close the descriptor unless still mapped

  void* handle_ = nullptr;
  int fd_ = -1;
};

}  // namespace simpler::rt
