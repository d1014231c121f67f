// RunHandle: completion of a submitted program-mode run.
#include "simpler/worker/run_handle.h"

#include <algorithm>

#include "worker_core.h"

namespace simpler {

RunHandle::RunHandle(std::shared_ptr<detail::WorkerCore> core,
                     std::shared_ptr<detail::RunRecord> record)
    : core_(std::move(core)), record_(std::move(record)) {}

// A run whose worker no longer has a context (never expected: close drains or abandons
// every run it holds, ending each). An error, never a dereference of the missing context.
static ChipWorkerError no_context() {
  return ChipWorkerError(PTO_RUNTIME_ERR_INVALID_STATE,
                         "RunHandle: the worker's context is gone (closed) and this run was not "
                         "completed by it");
}

bool RunHandle::done() const {
  if (record_->finished.load(std::memory_order_acquire)) return true;
  core_->refuse_if_forked("RunHandle.done");
  // Non-blocking: while another thread holds the worker (a blocking run, a wait slice),
  // the run is reported as not (yet observed) done.
  std::unique_lock lock(core_->program_mu, std::try_to_lock);
  if (!lock.owns_lock() || record_->finished.load()) return record_->finished.load();
  if (!core_->chip) {
    fail(std::make_exception_ptr(no_context()));
    return true;
  }
  bool finished = false;
  try {
    finished = core_->chip->poll(record_->run_id);
  } catch (...) {
    fail(std::current_exception());
    return true;
  }
  if (finished) core_->complete_run(*record_);
  return finished;
}

void RunHandle::fail(std::exception_ptr error) const {
  core_->fail_run(*record_, std::move(error));
}

void RunHandle::wait(std::optional<std::chrono::microseconds> timeout) const {
  using Clock = std::chrono::steady_clock;
  // The worker lock is released between bounded slices so other threads keep going.
  constexpr auto kSlice = std::chrono::microseconds(20'000);
  const auto deadline = timeout ? Clock::now() + *timeout : Clock::time_point::max();
  if (!record_->finished.load(std::memory_order_acquire)) core_->refuse_if_forked("RunHandle.wait");
  for (;;) {
    {
      std::lock_guard lock(core_->program_mu);
      if (record_->finished.load()) break;
      if (!core_->chip) {
        fail(std::make_exception_ptr(no_context()));
        break;
      }
      auto slice = kSlice;
      if (timeout) {
        const auto left =
            std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
        slice = std::clamp(left, std::chrono::microseconds(0), kSlice);
      }
      bool finished = false;
      try {
        finished = core_->chip->wait(record_->run_id, slice);
      } catch (...) {
        fail(std::current_exception());
        break;
      }
      if (finished) {
        core_->complete_run(*record_);
        break;
      }
    }
    if (timeout && Clock::now() >= deadline) {
      throw WorkerTimeoutError(
          "RunHandle.wait: the run did not finish within the timeout; it keeps "
          "running (wait again)");
    }
  }
  if (record_->error) std::rethrow_exception(record_->error);
}

}  // namespace simpler
