// Typed errors of the worker layer.
#include "simpler/worker/errors.h"

#include "simpler/abi/status.h"

namespace simpler {

ChipWorkerError::ChipWorkerError(int code, const std::string& message)
    : std::runtime_error(message + " [" + simpler_status_name(code) + "]"),
      code_(code),
      detail_(message) {}

const char* ChipWorkerError::status_name() const noexcept { return simpler_status_name(code_); }

UnsupportedRuntimeOperation::UnsupportedRuntimeOperation(const std::string& message)
    : ChipWorkerError(PTO_RUNTIME_ERR_UNSUPPORTED, message) {}

void throw_on_status(int status, const std::string& what_failed) {
  if (status == SIMPLER_OK) return;
  if (status == PTO_RUNTIME_ERR_UNSUPPORTED) throw UnsupportedRuntimeOperation(what_failed);
  throw ChipWorkerError(status, what_failed);
}

}  // namespace simpler
