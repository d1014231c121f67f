// simpler runtime host — the one exception type used inside the C ABI implementation.
// Thrown deep inside, caught at the exported entry, turned into (status, last error).
#pragma once

#include <stdexcept>
#include <string>

// How a user ends a context, from Python and from C: spelt once for every message that
// asks for it. A macro, so phase_refusal() can concatenate it into static strings.
#define SIMPLER_HOW_TO_CLOSE "(worker.close(); C ABI: finalize_device)"

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
