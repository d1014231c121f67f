// simpler runtime host — the one exception type used inside the C ABI implementation.
// Thrown deep inside, caught at the exported entry, turned into (status, last error).
#pragma once

#include <stdexcept>
#include <string>

namespace simpler::rt::host {

class AbiError : public std::runtime_error {
 public:
  AbiError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

[[noreturn]] inline void fail(int status, const std::string& message) {
  throw AbiError(status, message);
}

}  // namespace simpler::rt::host
