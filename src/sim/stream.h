// A stream: an in-order queue of operations executed by one lazily started executor
// thread. Enqueue is a short critical section on a growable ring (no allocation in the
// steady state) and wakes the executor only when it is parked; the executor takes queued
// ops out in batches, so a busy launcher and executor meet on the mutex once per batch. The first
// failing operation latches the stream's sticky status; later operations are skipped (device-job
// cleanups and event records still run, so nothing leaks and no waiter hangs).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "stream_op.h"

namespace simpler::sim {

class Stream {
 public:
  Stream(int32_t device, const DeviceMemoryView& memory);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int32_t device() const { return device_; }

  // SIMPLER_OK, SIM_ERR_INVALID_HANDLE (stream closed) or SIM_ERR_OUT_OF_MEMORY (host).
  int enqueue(StreamOp&& op);
  // Waits for everything enqueued so far; returns the sticky status. SIM_ERR_BUSY when
  // called from this stream's own executor (it would wait for itself).
  int synchronize();
  // Sticky status if any, else SIMPLER_NOT_READY while work is pending, else SIMPLER_OK.
  int query() const;
  // Refuses new work, waits for the pending work, stops and joins the executor.
  // SIM_ERR_BUSY from the stream's own executor. Idempotent.
  int close();

  bool on_executor_thread() const;
  // The stream whose executor is the calling thread, or nullptr.
  static const Stream* executing_on_this_thread();

 private:
  void executor_main();
  // Moves up to max queued ops to out (0: stopping). Spins briefly, then parks.
  std::size_t pop_batch_or_park(StreamOp* out, std::size_t max);
  void execute(StreamOp& op);
  int copy(const StreamOp& op) const;
  void wait_completed(uint64_t target);
  void grow_locked();

  const int32_t device_;
  const DeviceMemoryView& memory_;

  std::mutex queue_mutex_;  // guards the ring, the indices and the flags below
  std::condition_variable work_cv_;
  std::vector<StreamOp> ring_;  // power-of-two capacity
  uint64_t head_ = 0;
  uint64_t tail_ = 0;
  bool executor_parked_ = false;
  bool closed_ = false;
  bool stopping_ = false;
  std::thread executor_;
  std::atomic<uint64_t> published_tail_{0};  // tail_, readable without the lock

  std::atomic<uint64_t> completed_{0};
  std::atomic<int> sticky_status_{0};  // written only by the executor
  std::atomic<uint32_t> sync_waiters_{0};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;

  std::mutex close_mutex_;
  bool joined_ = false;  // guarded by close_mutex_
};

}  // namespace simpler::sim
