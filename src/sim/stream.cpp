#include "stream.h"

#include <pthread.h>

#include <chrono>
#include <cstring>
#include <system_error>
#include <utility>

#include "simpler/abi/status.h"
#include "spin_wait.h"

namespace simpler::sim {
namespace {

// The stream whose executor runs on this thread (detects self-waits that would deadlock).
thread_local const Stream* t_executing_stream = nullptr;

}  // namespace

Stream::Stream(int32_t device, const DeviceMemoryView& memory) : device_(device), memory_(memory) {
  tail_segment_ = head_segment_ = new Segment();
}

// The last reference is never dropped on the stream's own executor: every API call that
// holds one is either outside the stream or refused there (SIM_ERR_BUSY) before release.
Stream::~Stream() {
  close();
  for (Segment* s = head_segment_; s != nullptr;) {
    Segment* next = s->next.load(std::memory_order_relaxed);
    delete s;
    s = next;
  }
  delete spare_.load(std::memory_order_relaxed);
}

bool Stream::on_executor_thread() const { return t_executing_stream == this; }

const Stream* Stream::executing_on_this_thread() { return t_executing_stream; }

Stream::Segment* Stream::take_segment() {
  Segment* segment = spare_.exchange(nullptr, std::memory_order_acquire);
  return segment != nullptr ? segment : new Segment();
}

int Stream::enqueue(StreamOp&& op) {
  try {
    std::lock_guard lock(enqueue_mutex_);
    if (closed_) return SIM_ERR_INVALID_HANDLE;
    if (!executor_.joinable()) executor_ = std::thread([this] { executor_main(); });
    if (tail_index_ == kSegmentOps) {
      Segment* next = take_segment();
      // Linked before the op is published: the executor follows `next` only for
      // published ops, and the publishing store below orders this one before it.
      tail_segment_->next.store(next, std::memory_order_relaxed);
      tail_segment_ = next;
      tail_index_ = 0;
    }
    tail_segment_->ops[tail_index_++].op = std::move(op);
    published_tail_.store(++tail_, std::memory_order_seq_cst);
  } catch (const std::bad_alloc&) {
    return SIM_ERR_OUT_OF_MEMORY;
  } catch (const std::system_error&) {  // the executor thread could not be started
    return SIM_ERR_OUT_OF_MEMORY;
  }
  // seq_cst publish, then seq_cst load of parked_: either the executor sees the op before
  // it sleeps, or we see it parked and wake it (under its mutex, so the wake is not lost).
  if (parked_.load(std::memory_order_seq_cst)) {
    std::lock_guard park(park_mutex_);
    work_cv_.notify_one();
  }
  return SIMPLER_OK;
}

bool Stream::wait_for_work() {
  auto published = [&] { return published_tail_.load(std::memory_order_acquire) != head_; };
  if (spin_until(published, kExecutorSpin)) return true;
  std::unique_lock lock(park_mutex_);
  for (;;) {
    parked_.store(true, std::memory_order_seq_cst);
    if (published_tail_.load(std::memory_order_seq_cst) != head_) break;
    if (stopping_.load(std::memory_order_acquire)) {
      parked_.store(false, std::memory_order_relaxed);
      return false;
    }
    work_cv_.wait(lock);
  }
  parked_.store(false, std::memory_order_relaxed);
  return true;
}

void Stream::executor_main() {
  // Named so tools (and tests) can tell stream executors from other threads.
  pthread_setname_np(pthread_self(), "sim-stream");
  t_executing_stream = this;
  while (wait_for_work()) {
    const uint64_t available = published_tail_.load(std::memory_order_acquire);
    while (head_ != available) {
      if (head_index_ == kSegmentOps) {
        // Drained: move on (the producer linked the next segment before publishing into
        // it) and hand this one back; a producer never touches a drained segment.
        Segment* drained = head_segment_;
        head_segment_ = drained->next.load(std::memory_order_relaxed);
        head_index_ = 0;
        drained->next.store(nullptr, std::memory_order_relaxed);
        delete spare_.exchange(drained, std::memory_order_release);
      }
      // Executed in place: the slot is not reused before its segment is drained.
      StreamOp& op = head_segment_->ops[head_index_].op;
      execute(op);
      ++head_index_;
      ++head_;
      wake_waiters(completed_.fetch_add(1, std::memory_order_seq_cst) + 1);
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
    if (int status = memory_.check_queued_range(op.dst, op.size); status != SIMPLER_OK)
      return status;
  }
  if (src_on_device) {
    if (int status = memory_.check_queued_range(op.src, op.size); status != SIMPLER_OK)
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
        status = memory_.check_queued_range(op.dst, op.size);
        if (status == SIMPLER_OK) std::memset(op.dst, op.memset_value, op.size);
      }
      break;
    case StreamOpKind::kHostFunc:
      if (sticky == SIMPLER_OK) op.host_fn(op.user_data);
      break;
    case StreamOpKind::kDeviceJob:
      if (sticky == SIMPLER_OK)
        status = op.preset_status != 0 ? op.preset_status : op.job(op.user_data);
      // Retired before the cleanup: a cleanup that signals "done" to a waiter must find
      // the job's memory uses over (a free right after the wait is not deferred).
      retire();
      if (op.cleanup != nullptr) op.cleanup(op.user_data);
      if (sticky == SIMPLER_OK && status != SIMPLER_OK)
        sticky_status_.store(status, std::memory_order_release);
      return;
    case StreamOpKind::kRecordEvent:  // signalled by executor_main after completion
      break;
    case StreamOpKind::kWaitEvent:
      if (sticky == SIMPLER_OK) op.event->wait(op.event_generation);
      break;
  }
  retire();
  if (sticky == SIMPLER_OK && status != SIMPLER_OK)
    sticky_status_.store(status, std::memory_order_release);
}

// Only the executor writes retired_: a release store (no locked read-modify-write) is
// enough for whoever reads the new count to see the op's memory uses over.
void Stream::retire() {
  retired_.store(retired_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

uint64_t Stream::unretired_target() const {
  const uint64_t enqueued = published_tail_.load(std::memory_order_acquire);
  return retired_.load(std::memory_order_acquire) < enqueued ? enqueued : 0;
}

// Waiter: count itself, lower wake_at_ to its target, check, park (all seq_cst). The
// executor: count the op, then read the waiter count and wake_at_. Either the waiter sees
// the count reached, or the executor sees both its registration and its target and wakes
// it under done_mutex_ (held by the waiter from lowering the target to parking).
void Stream::wake_waiters(uint64_t completed) {
  if (sync_waiters_.load(std::memory_order_seq_cst) == 0) return;
  if (completed < wake_at_.load(std::memory_order_seq_cst)) return;
  {
    std::lock_guard lock(done_mutex_);
    // Every waiter wakes and lowers it again to its own target before parking again.
    wake_at_.store(UINT64_MAX, std::memory_order_seq_cst);
  }
  done_cv_.notify_all();
}

void Stream::lower_wake_at(uint64_t target) {
  if (target < wake_at_.load(std::memory_order_relaxed))
    wake_at_.store(target, std::memory_order_seq_cst);
}

void Stream::wait_completed(uint64_t target) {
  auto done = [&] { return completed_.load(std::memory_order_seq_cst) >= target; };
  if (spin_until(done, kWaiterSpin)) return;
  sync_waiters_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock lock(done_mutex_);
    for (;;) {
      lower_wake_at(target);
      if (done()) break;
      done_cv_.wait(lock);
    }
  }
  sync_waiters_.fetch_sub(1, std::memory_order_seq_cst);
}

bool Stream::wait_completed_for(uint64_t target, int64_t timeout_us) {
  auto done = [&] { return completed_.load(std::memory_order_seq_cst) >= target; };
  if (spin_until(done, kWaiterSpin)) return true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us);
  sync_waiters_.fetch_add(1, std::memory_order_seq_cst);
  bool reached = false;
  {
    std::unique_lock lock(done_mutex_);
    for (;;) {
      lower_wake_at(target);
      if (done()) {
        reached = true;
        break;
      }
      if (done_cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
        reached = done();
        break;
      }
    }
  }
  sync_waiters_.fetch_sub(1, std::memory_order_seq_cst);
  return reached;
}

int Stream::wait_for(int64_t timeout_us) {
  if (on_executor_thread()) return SIM_ERR_BUSY;
  const uint64_t target = published_tail_.load(std::memory_order_acquire);
  return wait_completed_for(target, timeout_us < 0 ? 0 : timeout_us) ? SIMPLER_OK
                                                                     : SIMPLER_NOT_READY;
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
    std::lock_guard lock(enqueue_mutex_);
    closed_ = true;
    target = tail_;
  }
  wait_completed(target);
  {
    std::lock_guard park(park_mutex_);
    stopping_.store(true, std::memory_order_release);
  }
  work_cv_.notify_one();
  if (executor_.joinable()) executor_.join();
  joined_ = true;
  return SIMPLER_OK;
}

}  // namespace simpler::sim
