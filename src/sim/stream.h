// A stream: an in-order queue of operations executed by one lazily started executor
// thread. The queue is a linked list of fixed-size segments of ops: launching threads
// append under a mutex of their own (producers serialize among themselves only) and
// publish each op with one atomic store; the executor runs published ops in place and
// never takes that mutex, so a launcher and the executor share no lock on the hot path.
// Segments the executor has drained are recycled (one spare), so the steady state
// allocates nothing. An idle executor spins briefly, then parks on a condition variable;
// a launcher takes the park mutex only when it sees the executor parked. The first
// failing operation latches the stream's sticky status; later operations are skipped
// (device-job cleanups and event records still run, so nothing leaks and no waiter hangs).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

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
  // Waits up to timeout_us for everything enqueued so far: SIMPLER_OK once it ran,
  // SIMPLER_NOT_READY when the time is up, SIM_ERR_BUSY from the stream's own executor.
  // Lets a caller wait in slices (and honour signals between them).
  int wait_for(int64_t timeout_us);
  // Sticky status if any, else SIMPLER_NOT_READY while work is pending, else SIMPLER_OK.
  int query() const;
  // Refuses new work, waits for the pending work, stops and joins the executor.
  // SIM_ERR_BUSY from the stream's own executor. Idempotent.
  int close();

  // Ops enqueued so far when some of them have not retired yet, else 0. An op retires
  // once its body ran (a device job before its cleanup): a free ordered after the
  // stream's queued work waits until retired() reaches this.
  uint64_t unretired_target() const;
  uint64_t retired() const { return retired_.load(std::memory_order_acquire); }

  bool on_executor_thread() const;
  // The stream whose executor is the calling thread, or nullptr.
  static const Stream* executing_on_this_thread();

 private:
  static constexpr std::size_t kSegmentOps = 256;
  // Each op on lines of its own: the launcher fills slot k + 1 while the executor runs
  // slot k, and a shared line would bounce between them on every op.
  struct alignas(64) Slot {
    StreamOp op;
  };
  struct Segment {
    Slot ops[kSegmentOps];
    std::atomic<Segment*> next{nullptr};
  };

  void executor_main();
  // True when an op is published; false once stopping with nothing left. Spins briefly,
  // then parks.
  bool wait_for_work();
  void execute(StreamOp& op);
  void retire();  // executor only
  int copy(const StreamOp& op) const;
  void wait_completed(uint64_t target);
  Segment* take_segment();  // producers, enqueue_mutex_ held
  bool wait_completed_for(uint64_t target, int64_t timeout_us);
  void lower_wake_at(uint64_t target);  // done_mutex_ held
  void wake_waiters(uint64_t completed);

  const int32_t device_;
  const DeviceMemoryView& memory_;

  // Members are grouped by the thread that writes them, one cache line (or more) per
  // group: a line the executor writes per op never shares a line the launcher writes per
  // enqueue, so neither pulls the other's line on the hot path (only the op slots and
  // published_tail_ themselves cross).

  // Producer side, guarded by enqueue_mutex_ (never taken by the executor).
  alignas(64) std::mutex enqueue_mutex_;
  Segment* tail_segment_ = nullptr;
  std::size_t tail_index_ = 0;  // next free slot of tail_segment_
  uint64_t tail_ = 0;
  bool closed_ = false;
  std::thread executor_;
  // Ops visible to the executor: written per enqueue, polled by the executor.
  alignas(64) std::atomic<uint64_t> published_tail_{0};

  // Executor side (only the executor thread touches these, after construction).
  alignas(64) Segment* head_segment_ = nullptr;
  std::size_t head_index_ = 0;
  uint64_t head_ = 0;
  std::atomic<Segment*> spare_{nullptr};  // one drained segment, handed back to producers

  // Parking: the executor waits here when idle; producers notify only when it is parked.
  // Read per enqueue, written only when the executor parks or wakes.
  alignas(64) std::mutex park_mutex_;
  std::condition_variable work_cv_;
  std::atomic<bool> parked_{false};
  std::atomic<bool> stopping_{false};

  // Written by the executor per op.
  alignas(64) std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> retired_{0};   // <= completed_ + 1: bumped before a job's cleanup
  std::atomic<int> sticky_status_{0};  // written only by the executor
  // Read by the executor per op, written by waiters.
  alignas(64) std::atomic<uint32_t> sync_waiters_{0};
  // The smallest completion count a parked waiter waits for (UINT64_MAX: none). Lowered
  // by waiters and reset by the executor, both under done_mutex_, so the executor wakes
  // waiters (a futex) once when their target is reached, not after every op.
  std::atomic<uint64_t> wake_at_{UINT64_MAX};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;

  std::mutex close_mutex_;
  bool joined_ = false;  // guarded by close_mutex_
};

}  // namespace simpler::sim
