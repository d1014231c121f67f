// simpler — typed errors of the worker layer (ChipWorker, Worker).
//
// Python translation (src/python/bind_worker.cpp):
//   ChipWorkerError              -> simpler.errors.ChipWorkerError (RuntimeError, .code)
//   UnsupportedRuntimeOperation  -> simpler.errors.UnsupportedRuntimeOperation
//   WorkerTimeoutError           -> TimeoutError
//   NotImplementedYet            -> NotImplementedError
//   std::invalid_argument        -> ValueError;  std::runtime_error -> RuntimeError
#pragma once

#include <stdexcept>
#include <string>

namespace simpler {

// A runtime-build call failed (or the build could not be used). code() is the native
// status; what() ends with the status name, e.g. "... [PTO_RUNTIME_ERR_INVALID_STATE]".
class ChipWorkerError : public std::runtime_error {
 public:
  ChipWorkerError(int code, const std::string& message);
  int code() const noexcept { return code_; }
  const char* status_name() const noexcept;
  // The message without the trailing status name.
  const std::string& detail() const noexcept { return detail_; }

 private:
  int code_;
  std::string detail_;
};

// The runtime build does not support the operation (code PTO_RUNTIME_ERR_UNSUPPORTED).
class UnsupportedRuntimeOperation : public ChipWorkerError {
 public:
  explicit UnsupportedRuntimeOperation(const std::string& message);
};

// A bounded wait expired (RunHandle::wait, Worker::close past its grace period).
class WorkerTimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A documented capability that is not implemented yet (e.g. Worker level 3).
class NotImplementedYet : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Throws ChipWorkerError (UnsupportedRuntimeOperation for UNSUPPORTED) when status != 0.
void throw_on_status(int status, const std::string& what_failed);

}  // namespace simpler
