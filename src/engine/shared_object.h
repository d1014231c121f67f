// simpler runtime — a shared object loaded from bytes (internal).
//
// The bytes are written to a private temp file (mkstemp in $TMPDIR or /tmp, mode 0600),
// dlopen'ed RTLD_NOW | RTLD_LOCAL and unlinked at once, so nothing stays in the temp
// directory, on success or on any failure. dlclose on destruction.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace simpler::rt {

class SharedObject {
 public:
  SharedObject() = default;
  ~SharedObject();
  SharedObject(SharedObject&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  SharedObject& operator=(SharedObject&& other) noexcept;
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  // False with `error` naming the step that failed (temp file, write, dlopen).
  static bool load(std::span<const uint8_t> bytes, SharedObject* out, std::string* error);
  // nullptr if the object does not export `name`.
  void* symbol(const char* name) const;
  bool loaded() const { return handle_ != nullptr; }

 private:
  void* handle_ = nullptr;
};

}  // namespace simpler::rt
