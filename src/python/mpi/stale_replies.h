// Replies to requests this rank gave up on (the peer was declared dead, or the caller
// stopped waiting because another rank failed): the peer may still send one. A reply's tag
// is its request id, and ids wrap (link.cpp, kTagSpan), so a stale reply left queued would
// be matched by a later request that drew the same id. Each one is consumed when it
// arrives (drain, on the progress thread), and until then its id is never drawn again
// (holds). Bounded: past kMax ids given up on and still unanswered, the oldest is
// forgotten (its peer has been silent through kMax later give-ups).
// A data transfer given up on before its data moved may leave its message queued at the
// receiver (a refused receive never posts one): its tag is held too (hold), not drained
// (the message sits at the other rank), so no later transfer matches it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <utility>

namespace simpler::mpi {

class StaleReplies {
 public:
  static constexpr size_t kMax = 1024;

  void add(int dest, int64_t rid) {
    std::lock_guard<std::mutex> lock(mutex_);
    ids_.emplace_back(dest, rid);
    if (ids_.size() > kMax) ids_.pop_front();
    count_.store(ids_.size(), std::memory_order_release);
  }

  // A data tag never to be drawn again (within the bound).
  void hold(int64_t tag) { add(kNoPeer, tag); }

  // Whether a reply to `rid` (any peer) may still arrive, or `rid` is a held data tag.
  bool holds(int64_t rid) {
    if (count_.load(std::memory_order_acquire) == 0) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& id : ids_) {
      if (id.second == rid) return true;
    }
    return false;
  }

  // Receives and drops every stale reply that has arrived on `ctrl`.
  void drain(MPI_Comm ctrl) {
    if (count_.load(std::memory_order_acquire) == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = ids_.begin(); it != ids_.end();) {
      if (it->first == kNoPeer) {
        ++it;
        continue;
      }
      int flag = 0;
      MPI_Message message;
      MPI_Status status;
      if (MPI_Improbe(it->first, static_cast<int>(it->second), ctrl, &flag, &message, &status) !=
              MPI_SUCCESS ||
          !flag) {
        ++it;
        continue;
      }
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      std::string bytes(static_cast<size_t>(count), '\0');
      MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      it = ids_.erase(it);
    }
    count_.store(ids_.size(), std::memory_order_release);
  }

  size_t size() const { return count_.load(std::memory_order_acquire); }

 private:
  static constexpr int kNoPeer = -2;  // a held data tag (MPI_ANY_SOURCE is -1)
  std::mutex mutex_;
  std::deque<std::pair<int, int64_t>> ids_;  // (peer, request id), oldest first
  std::atomic<size_t> count_{0};
};

}  // namespace simpler::mpi
