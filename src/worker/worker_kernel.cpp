// simpler::Worker, kernel mode: prepare and launch on the caller's stream.
#include <algorithm>
#include <mutex>

#include "process_guards.h"
#include "worker_core.h"

namespace simpler {

using detail::WorkerCore;

static void require_kernel_mode(const WorkerCore& c, const char* api) {
  if (c.mode != ExecutionMode::KERNEL) {
    throw std::runtime_error(detail::api_name(api) + ": requires execution_mode='kernel'");
  }
}

bool WorkerCore::forked() const { return bound_fork_epoch != fork_epoch(); }

void WorkerCore::refuse_if_forked(const char* api) const {
  if (bound_fork_epoch != fork_epoch()) {
    throw std::runtime_error(
        detail::api_name(api) + ": this process is a fork of the one (pid " +
        std::to_string(bound_pid) +
        ") that bound the context; a forked child must not drive or tear it down (drop "
        "the inherited Worker, which then makes no native call, and create a new Worker in "
        "the child)");
  }
}

using detail::refuse_not_ready;

void Worker::require_kernel_ready(const char* api) const {
  const WorkerCore& c = *core_;
  require_kernel_mode(c, api);
  const WorkerState state = c.state.load();
  if (state != WorkerState::READY) refuse_not_ready(state, api);
  c.refuse_if_forked(api);
}

int64_t Worker::kernel_prepare_callable(const ChipCallable& callable) {
  WorkerCore& c = *core_;
  require_kernel_mode(c, "kernel_prepare_callable");
  WorkerState state = c.state.load();
  if (state != WorkerState::READY) refuse_not_ready(state, "kernel_prepare_callable");
  c.refuse_if_forked("kernel_prepare_callable");
  std::lock_guard lock(c.kernel_mu);
  state = c.state.load();
  if (state != WorkerState::READY) refuse_not_ready(state, "kernel_prepare_callable");
  // The Worker's own reference, kept (even when prepare fails) until a teardown succeeds.
  c.kernel_images.push_back(std::make_shared<const ChipCallable>(callable));
  const int64_t id =
      c.chip->kernel_prepare_callable(*c.kernel_images.back(), "kernel_prepare_callable");
  auto specs = std::make_shared<const std::vector<ArgSpec>>(callable.arg_specs());
  const bool typed =
      std::any_of(specs->begin(), specs->end(), [](const ArgSpec& s) { return s.typed(); });
  c.minted_ids.add(id, WorkerCore::Minted{std::move(specs), typed});
  return id;
}

[[noreturn]] static void refuse_busy(const char* api) {
  throw std::runtime_error(detail::api_name(api) +
                           ": a kernel prepare/launch/close is in progress on this worker; "
                           "callers must serialize their use of one kernel-mode Worker");
}

[[noreturn]] static void refuse_foreign_id(int64_t callable_id, const char* api) {
  throw std::invalid_argument(detail::api_name(api) + ": callable_id " +
                              std::to_string(callable_id) +
                              " was not returned by this Worker's kernel_prepare_callable");
}

std::shared_ptr<const std::vector<ArgSpec>> Worker::kernel_arg_specs(int64_t callable_id,
                                                                     const char* api) const {
  const WorkerCore& c = *core_;
  require_kernel_ready(api);
  std::unique_lock lock(c.kernel_mu, std::try_to_lock);
  if (!lock.owns_lock()) refuse_busy(api);
  const WorkerCore::Minted* minted = c.minted_ids.find(callable_id);
  if (minted == nullptr) refuse_foreign_id(callable_id, api);
  return minted->specs;
}

void Worker::kernel_launch(int64_t callable_id, const ChipStorageTaskArgs& args,
                           void* caller_stream, const char* api) {
  WorkerCore& c = *core_;
  require_kernel_mode(c, api);
  WorkerState state = c.state.load(std::memory_order_acquire);
  if (state != WorkerState::READY) refuse_not_ready(state, api);
  c.refuse_if_forked(api);
  if (caller_stream == nullptr) {
    throw std::invalid_argument(detail::api_name(api) +
                                ": caller_stream must be a nonzero stream handle (the stream "
                                "the caller created on its current device)");
  }
  std::unique_lock lock(c.kernel_mu, std::try_to_lock);
  if (!lock.owns_lock()) refuse_busy(api);
  state = c.state.load(std::memory_order_acquire);
  if (state != WorkerState::READY) refuse_not_ready(state, api);
  const WorkerCore::Minted* minted = c.minted_ids.find(callable_id);
  if (minted == nullptr) refuse_foreign_id(callable_id, api);
  if (minted->typed) detail::check_signature_types(args, *minted->specs, api);
  c.chip->kernel_launch(callable_id, args, caller_stream, api);
}

std::string Worker::kernel_launch_error() {
  WorkerCore& c = *core_;
  if (c.mode != ExecutionMode::KERNEL) return {};
  std::lock_guard lock(c.kernel_mu);
  if (!c.chip || c.state.load() != WorkerState::READY) return {};
  return c.chip->kernel_launch_error();
}

}  // namespace simpler
