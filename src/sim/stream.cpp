#include "stream.h"

#include <pthread.h>

#include <array>
#include <cstring>
#include <system_error>
#include <utility>

#include "simpler/abi/status.h"
#include "spin_wait.h"

namespace simpler::sim {
namespace {

constexpr std::size_t kInitialRingCapacity = 256;
// Ops the executor takes out of the ring per critical section.
constexpr std::size_t kExecutorBatch = 64;

// The stream whose executor runs on this thread (detects self-waits that would deadlock).
thread_local const Stream* t_executing_stream = nullptr;

}  // namespace

Stream::Stream(int32_t device, const DeviceMemoryView& memory)
    : device_(device), memory_(memory), ring_(kInitialRingCapacity) {}

// The last reference is never dropped on the stream's own executor: every API call that
// holds one is either outside the stream or refused there (SIM_ERR_BUSY) before release.
Stream::~Stream() { close(); }

bool Stream::on_executor_thread() const { return t_executing_stream == this; }

const Stream* Stream::executing_on_this_thread() { return t_executing_stream; }

void Stream::grow_locked() {
  std::vector<StreamOp> bigger(ring_.size() * 2);
  const uint64_t mask = bigger.size() - 1;
  const uint64_t old_mask = ring_.size() - 1;
  for (uint64_t i = head_; i != tail_; ++i) bigger[i & mask] = std::move(ring_[i & old_mask]);
  ring_.swap(bigger);
}

int Stream::enqueue(StreamOp&& op) {
  bool wake = false;
  try {
    std::lock_guard lock(queue_mutex_);
    if (closed_) return SIM_ERR_INVALID_HANDLE;
    if (!executor_.joinable()) executor_ = std::thread([this] { executor_main(); });
    if (tail_ - head_ == ring_.size()) grow_locked();
    ring_[tail_ & (ring_.size() - 1)] = std::move(op);
    ++tail_;
    published_tail_.store(tail_, std::memory_order_release);
    wake = executor_parked_;
  } catch (const std::bad_alloc&) {
    return SIM_ERR_OUT_OF_MEMORY;
  } catch (const std::system_error&) {  // the executor thread could not be started
    return SIM_ERR_OUT_OF_MEMORY;
  }
  if (wake) work_cv_.notify_one();
  return SIMPLER_OK;
}

std::size_t Stream::pop_batch_or_park(StreamOp* out, std::size_t max) {
  spin_until([&] { return published_tail_.load(std::memory_order_acquire) != head_; },
             kExecutorSpin);
  std::unique_lock lock(queue_mutex_);
  for (;;) {
    if (head_ != tail_) {
      // Take everything queued (up to max) in one critical section: the launcher meets
      // the executor on this mutex once per batch, not once per op.
      std::size_t n = 0;
      const uint64_t mask = ring_.size() - 1;
      for (; n < max && head_ != tail_; ++n, ++head_) out[n] = std::move(ring_[head_ & mask]);
      return n;
    }
    if (stopping_) return 0;
    executor_parked_ = true;
    work_cv_.wait(lock);
    executor_parked_ = false;
  }
}

void Stream::executor_main() {
  // Named so tools (and tests) can tell stream executors from other threads.
  pthread_setname_np(pthread_self(), "sim-stream");
  t_executing_stream = this;
  std::array<StreamOp, kExecutorBatch> batch;
  while (const std::size_t count = pop_batch_or_park(batch.data(), batch.size())) {
    for (std::size_t i = 0; i < count; ++i) {
      StreamOp& op = batch[i];
      execute(op);
      completed_.fetch_add(1, std::memory_order_seq_cst);
      if (sync_waiters_.load(std::memory_order_seq_cst) != 0) {
        { std::lock_guard lock(done_mutex_); }
        done_cv_.notify_all();
      }
      // Signalled after the completion count, so whoever saw the event reached also sees
      // the stream idle if the record was its last operation. Signalled even when skipped
      // by a sticky error: waiters must not hang.
      if (op.kind == StreamOpKind::kRecordEvent) op.event->signal(op.event_generation);
      op.event.reset();
    }
  }
  t_executing_stream = nullptr;
}

int Stream::copy(const StreamOp& op) const {
  const bool dst_on_device = op.copy_kind != SIM_MEMCPY_DEVICE_TO_HOST;
  const bool src_on_device = op.copy_kind != SIM_MEMCPY_HOST_TO_DEVICE;
  if (dst_on_device) {
    if (int status = memory_.check_device_range(op.dst, op.size); status != SIMPLER_OK)
      return status;
  }
  if (src_on_device) {
    if (int status = memory_.check_device_range(op.src, op.size); status != SIMPLER_OK)
      return status;
  }
  std::memmove(op.dst, op.src, op.size);
  return SIMPLER_OK;
}

void Stream::execute(StreamOp& op) {
  const int sticky = sticky_status_.load(std::memory_order_relaxed);
  int status = SIMPLER_OK;
  switch (op.kind) {
    case StreamOpKind::kMemcpy:
      if (sticky == SIMPLER_OK) status = copy(op);
      break;
    case StreamOpKind::kMemset:
      if (sticky == SIMPLER_OK) {
        status = memory_.check_device_range(op.dst, op.size);
        if (status == SIMPLER_OK) std::memset(op.dst, op.memset_value, op.size);
      }
      break;
    case StreamOpKind::kHostFunc:
      if (sticky == SIMPLER_OK) op.host_fn(op.user_data);
      break;
    case StreamOpKind::kDeviceJob:
      if (sticky == SIMPLER_OK)
        status = op.preset_status != 0 ? op.preset_status : op.job(op.user_data);
      if (op.cleanup != nullptr) op.cleanup(op.user_data);
      break;
    case StreamOpKind::kRecordEvent:  // signalled by executor_main after completion
      break;
    case StreamOpKind::kWaitEvent:
      if (sticky == SIMPLER_OK) op.event->wait(op.event_generation);
      break;
  }
  if (sticky == SIMPLER_OK && status != SIMPLER_OK)
    sticky_status_.store(status, std::memory_order_release);
}

void Stream::wait_completed(uint64_t target) {
  auto done = [&] { return completed_.load(std::memory_order_seq_cst) >= target; };
  if (spin_until(done, kWaiterSpin)) return;
  sync_waiters_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock lock(done_mutex_);
    done_cv_.wait(lock, done);
  }
  sync_waiters_.fetch_sub(1, std::memory_order_seq_cst);
}

int Stream::synchronize() {
  if (on_executor_thread()) return SIM_ERR_BUSY;
  wait_completed(published_tail_.load(std::memory_order_acquire));
  return sticky_status_.load(std::memory_order_acquire);
}

int Stream::query() const {
  const bool idle =
      completed_.load(std::memory_order_acquire) >= published_tail_.load(std::memory_order_acquire);
  const int sticky = sticky_status_.load(std::memory_order_acquire);
  if (sticky != SIMPLER_OK) return sticky;
  return idle ? SIMPLER_OK : SIMPLER_NOT_READY;
}

int Stream::close() {
  if (on_executor_thread()) return SIM_ERR_BUSY;
  std::lock_guard close_lock(close_mutex_);
  if (joined_) return SIMPLER_OK;
  uint64_t target = 0;
  {
    std::lock_guard lock(queue_mutex_);
    closed_ = true;
    target = tail_;
  }
  wait_completed(target);
  bool wake = false;
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
    wake = executor_parked_;
  }
  if (wake) work_cv_.notify_one();
  if (executor_.joinable()) executor_.join();
  joined_ = true;
  return SIMPLER_OK;
}

}  // namespace simpler::sim
