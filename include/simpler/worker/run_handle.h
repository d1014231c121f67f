// simpler — RunHandle: an asynchronous program-mode run returned by Worker::submit.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>

namespace simpler {

namespace detail {
struct WorkerCore;
struct RunRecord;
}  // namespace detail

class RunHandle {
 public:
  RunHandle(std::shared_ptr<detail::WorkerCore> core, std::shared_ptr<detail::RunRecord> record);

  // Non-blocking: true once the run finished (its HOST outputs are then copied back).
  bool done() const;
  // Waits for the run. timeout: std::nullopt = forever; on expiry throws WorkerTimeoutError
  // and the run keeps going. A failed run throws its ChipWorkerError; idempotent: later
  // waits repeat the same outcome.
  void wait(std::optional<std::chrono::microseconds> timeout = std::nullopt) const;

 private:
  void fail(std::exception_ptr error) const;  // worker lock held: the run ends with `error`

  std::shared_ptr<detail::WorkerCore> core_;
  std::shared_ptr<detail::RunRecord> record_;
};

}  // namespace simpler
