// One level-4 Worker's MPI plumbing on one rank, in native code so that no Python polling
// loop sits on the path of a transfer:
//  * a progress thread receives every request (fixed-size binary headers on the control
//    communicator), serves data movement between ranks directly on device memory (the
//    simulator's device memory is host memory: Isend/Irecv/memcpy on it, checked against
//    the driver's allocation table), posts MPI collectives, sends heartbeats and hands
//    everything else (runs, allocations, lifecycle messages) to the Python layer's inbox;
//  * requests of rank 0 are sent, and their replies awaited, by the calling thread itself
//    (the reply's tag is the request id), in a bounded spin then sleeps — every wait gives
//    up when the peer is declared dead (silent for rank_timeout seconds).
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collective.h"
#include "liveness.h"
#include "stale_replies.h"
#include "wire.h"

namespace simpler::mpi {

// What a wait ended with.
enum class Outcome { kDone, kPeerDead, kMpiError };

// A message for the Python layer (kPython, or a copy this rank cannot serve natively).
struct Message {
  int source = 0;
  Header head;
  std::string payload;
};

class Link;

// A request of this rank to another, in flight: its reply (and data transfer) awaited by
// wait(), on the thread that calls it.
class Call {
 public:
  Call() = default;
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call() { abandon(); }  // a call dropped unawaited (its run failed elsewhere)
  Outcome wait(Link& link, int64_t spin_ns);
  // One round of wait(): the outcome once there is one (repeatable), else nullopt.
  std::optional<Outcome> step(Link& link);
  const ReplyHead& head() const { return head_; }
  const std::string& payload() const { return payload_; }
  int dest() const { return dest_; }
  // The request id, 0 if it was never sent (the peer was already dead).
  int64_t rid() const { return dead_ ? 0 : rid_; }
  std::string error;

 private:
  friend class Link;
  void abandon();
  int dest_ = 0;
  int64_t rid_ = 0;
  std::shared_ptr<StaleReplies> stale_;   // where a reply given up on is recorded
  std::unique_ptr<std::string> message_;  // header + payload, read by MPI until sent
  MPI_Request send_ = MPI_REQUEST_NULL;
  MPI_Request data_ = MPI_REQUEST_NULL;
  bool data_is_recv_ = false;
  int64_t data_tag_ = 0;   // the transfer's tag on the data communicator
  bool has_data_ = false;  // a transfer on the data communicator goes with the request
  bool replied_ = false;
  bool moved_ = false;  // the data transfer (if any) completed, as of the last step
  bool dead_ = false;   // never sent: the peer was already declared dead
  ReplyHead head_;
  std::string payload_;
};

struct LinkConfig {
  MPI_Comm ctrl = MPI_COMM_NULL;  // requests, replies, heartbeats
  MPI_Comm data = MPI_COMM_NULL;  // bulk transfers (one tag each)
  MPI_Comm coll = MPI_COMM_NULL;  // MPI collectives of orchestrations
  double rank_timeout = 10.0;
  double heartbeat = 0.25;
  std::vector<int> peers;  // ranks this one sends heartbeats to
};

class Link {
 public:
  explicit Link(LinkConfig config);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  void start();
  void stop();
  // This rank's chips (slot -> simulated device id): copies and collectives on their
  // device memory are served natively. Without it every copy goes to the Python inbox.
  void serve_devices(std::vector<int32_t> devices);

  int rank() const { return rank_; }
  int size() const { return size_; }
  Liveness& liveness() { return liveness_; }
  void go_silent(double seconds);
  // Test hook: the next collective request received makes this rank silent for `seconds`
  // first; it is posted when the rank resumes (a rank stalling inside a collective).
  void go_silent_at_collective(double seconds);
  // Test hook: the next collective request received is refused (an error reply).
  void refuse_next_collective() { refuse_collective_.store(true); }

  // The next message for Python, waiting at most timeout seconds; false if none came.
  bool next_message(double timeout, Message* out);

  // A tag for a request id or a transfer; never the id of a reply given up on that may
  // still arrive (stale_replies.h).
  int64_t new_tag();
  // Rank 0 gave up on a transfer between two other ranks with this tag: never drawn again
  // (stale_replies.h), as its data may sit unmatched at the receiver.
  void hold_tag(int64_t tag) { stale_->hold(tag); }
  // Replies given up on and not yet arrived, and held tags (test hook).
  size_t stale_replies() const { return stale_->size(); }
  // A request to `dest`: header (rid filled in) + payload, with an optional bulk transfer
  // on the data communicator (send_buf to dest, or recv_buf from dest) under h.tag.
  std::unique_ptr<Call> begin(int dest, Header h, const std::string& payload, const void* send_buf,
                              void* recv_buf, size_t nbytes);
  // A message that expects no reply (kPython lifecycle messages), sent nonblocking and
  // awaited with the peer's liveness; false if the peer is dead.
  bool post(int dest, Header h, const std::string& payload);
  // The reply to request `rid` of `dest` (any thread).
  void reply(int dest, int64_t rid, ReplyHead head, const std::string& payload);

  // Rank 0 gives up on its request `rid` to `dest` (kAbandon): no effect if `dest` is dead.
  void abandon_request(int dest, int64_t rid);
  // Awaits every call; returns the index of the first to fail (an error reply, a dead
  // peer) as soon as it does, or -1 when all succeeded. One failing rank does not leave
  // the caller waiting on another rank's reply that now never comes.
  int wait_first_failure(const std::vector<Call*>& calls);
  // Keeps a collective that will not be awaited (another rank failed or went silent): it
  // never writes device memory, and is freed if MPI ever completes it.
  void orphan(std::unique_ptr<PostedCollective> posted);

  // A collective of this rank's chip, posted now (rank 0 posts them in the order it
  // launches them to the other members); nullptr with `error` set if MPI refused it.
  std::unique_ptr<PostedCollective> post_collective(const Header& h, const int64_t* counts,
                                                    size_t ncounts, std::string* error);
  // Awaits a posted collective with the liveness of every member rank. On kPeerDead the
  // collective (which may be neither freed nor cancelled) is abandoned and kept by the
  // progress thread, which frees it if it ever completes.
  Outcome wait_collective(std::unique_ptr<PostedCollective>& posted,
                          const std::vector<int>& members, std::string* error);

  // Whether [addr, addr+nbytes) lies in one live allocation of this rank's chip `slot`.
  bool device_range(int64_t slot, int64_t addr, int64_t nbytes, std::string* error) const;
  bool direct() const { return direct_; }

  // True while the progress thread should answer (test hook: go_silent).
  bool silent() const { return now_ns() < silent_until_.load(); }
  MPI_Comm ctrl() const { return config_.ctrl; }

 private:
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    int reply_to = -1;  // -1: an outgoing message (no reply when it completes)
    bool recv = false;  // a receive (cancelled if abandoned)
    int64_t started = 0;
    int64_t rid = 0;
    std::unique_ptr<std::string> keep;       // bytes MPI reads until completion
    std::unique_ptr<PostedCollective> coll;  // a collective's count arrays
  };

  void loop();
  int receive_one();  // 1: a request, -1: a heartbeat, 0: nothing
  void handle(int source, Header h, std::string payload);
  void answer(int dest, int64_t rid, int64_t status, int64_t code, const std::string& payload);
  void fail(int dest, int64_t rid, const std::string& message, int64_t code = 0);
  bool poll_pending();
  int64_t in_flight_since() const;  // start of the oldest transfer/collective in flight
  void heartbeats();
  void to_python(Message m);
  void drop_request(int source, int64_t rid);  // kAbandon received
  void reap_orphans();

  LinkConfig config_;
  int rank_ = 0;
  int size_ = 0;
  Liveness liveness_;
  std::vector<int32_t> devices_;
  bool direct_ = false;
  std::atomic<int64_t> silent_until_{0};
  std::atomic<int64_t> silent_at_collective_ns_{0};
  std::atomic<bool> refuse_collective_{false};
  std::deque<Message> deferred_;  // progress thread only: held back by the test hook
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> tags_{0};
  std::shared_ptr<StaleReplies> stale_ = std::make_shared<StaleReplies>();
  std::thread thread_;
  std::list<Pending> pending_;  // progress thread only
  int64_t last_beat_ = 0;
  std::mutex inbox_mutex_;
  std::condition_variable inbox_cv_;
  std::deque<Message> inbox_;
  std::shared_ptr<StagingPool> staging_ = std::make_shared<StagingPool>();
  std::mutex orphans_mutex_;
  std::vector<std::unique_ptr<PostedCollective>> orphans_;  // rank 0's abandoned collectives
};

}  // namespace simpler::mpi
