#include "link.h"

#include <climits>
#include <cstring>
#include <utility>

#include "backoff.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::mpi {
namespace {

constexpr int64_t kTagBase = 100;
constexpr int64_t kTagSpan = 30000;  // tags kTagBase.. (MPI guarantees >= 32767)
static_assert(StaleReplies::kMax < kTagSpan);
constexpr int64_t kHotNs = 1'000'000;   // progress thread: spin this long after traffic
constexpr int64_t kIdleMinNs = 20'000;  // then sleep 20 us, doubling up to 200 us
constexpr int64_t kIdleMaxNs = 200'000;
constexpr int64_t kWaitMinSleepNs = 10'000;
constexpr int64_t kWaitMaxSleepNs = 1'000'000;

void* as_ptr(int64_t addr) { return reinterpret_cast<void*>(static_cast<uintptr_t>(addr)); }

std::string framed(const Header& h, const std::string& payload) {
  std::string out(sizeof(Header) + payload.size(), '\0');
  std::memcpy(out.data(), &h, sizeof h);
  if (!payload.empty()) std::memcpy(out.data() + sizeof h, payload.data(), payload.size());
  return out;
}

bool test(MPI_Request* request) {
  if (*request == MPI_REQUEST_NULL) return true;
  int done = 0;
  MPI_Test(request, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

}  // namespace

// ---- Call --------------------------------------------------------------------------------

Outcome Call::wait(Link& link, int64_t spin_ns) {
  CallWait waiting(spin_ns, has_data_, kWaitMinSleepNs, kWaitMaxSleepNs);
  while (true) {
    if (std::optional<Outcome> outcome = step(link)) return *outcome;
    (void)waiting.pause(moved_);
  }
}

std::optional<Outcome> Call::step(Link& link) {
  if (dead_) return Outcome::kPeerDead;
  {
    const bool sent = test(&send_);
    const bool moved = moved_ = test(&data_);
    if (!replied_) {
      int flag = 0;
      MPI_Message message;
      MPI_Status status;
      if (MPI_Improbe(dest_, static_cast<int>(rid_), link.ctrl(), &flag, &message, &status) !=
          MPI_SUCCESS) {
        error = "MPI_Improbe failed";
        abandon();
        return Outcome::kMpiError;
      }
      if (flag) {
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        std::string bytes(static_cast<size_t>(count), '\0');
        MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
        link.liveness().saw(dest_);
        if (bytes.size() >= sizeof(ReplyHead)) {
          std::memcpy(&head_, bytes.data(), sizeof head_);
          payload_ = bytes.substr(sizeof(ReplyHead));
        } else {
          head_.status = kNativeError;
          payload_ = "malformed reply";
        }
        replied_ = true;
        // A failed request may never move its data: do not wait for it.
        if (head_.status != kOk) {
          abandon();
          return Outcome::kDone;
        }
      }
    }
    if (sent && moved && replied_) return Outcome::kDone;
    if (!link.liveness().alive(dest_)) {
      abandon();
      return Outcome::kPeerDead;
    }
  }
  return std::nullopt;
}

int Link::wait_first_failure(const std::vector<Call*>& calls) {
  std::vector<bool> done(calls.size(), false);
  size_t left = calls.size();
  Backoff backoff(200'000, kWaitMinSleepNs, kWaitMaxSleepNs);
  while (left != 0) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (done[i]) continue;
      const std::optional<Outcome> outcome = calls[i]->step(*this);
      if (!outcome) continue;
      done[i] = true;
      --left;
      if (*outcome != Outcome::kDone || calls[i]->head().status != kOk) return static_cast<int>(i);
    }
    if (left != 0) backoff.pause();
  }
  return -1;
}

void Call::abandon() {
  // The peer is gone (or refused): nothing more may arrive in our buffers. A receive is
  // cancelled; a send is released and its bytes leaked, since MPI may still read them.
  // A reply not received yet may still come: it is consumed when it does, never matched.
  if (!replied_ && !dead_ && stale_) stale_->add(dest_, rid_);
  // A transfer that did not succeed may leave its data unmatched at the receiver (a
  // refused receive never posts one; an eager send completes here anyway): hold its tag.
  const bool succeeded = replied_ && head_.status == kOk && moved_;
  if (has_data_ && !succeeded && stale_) stale_->hold(data_tag_);
  stale_.reset();
  if (data_ != MPI_REQUEST_NULL) {
    if (data_is_recv_) MPI_Cancel(&data_);
    MPI_Request_free(&data_);
  }
  if (send_ != MPI_REQUEST_NULL) {
    MPI_Request_free(&send_);
    (void)message_.release();  // NOLINT(bugprone-unused-return-value): see above
  }
}

// ---- Link --------------------------------------------------------------------------------

Link::Link(LinkConfig config)
    : config_(std::move(config)),
      liveness_(
          [&] {
            int size = 0;
            MPI_Comm_size(config_.ctrl, &size);
            return size;
          }(),
          config_.rank_timeout) {
  MPI_Comm_rank(config_.ctrl, &rank_);
  MPI_Comm_size(config_.ctrl, &size_);
}

Link::~Link() { stop(); }

void Link::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void Link::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  // Requests still in flight belong to dead or silent peers: release them (a receive is
  // cancelled first); their buffers stay allocated, MPI may still touch them.
  // A nonblocking collective may be neither freed nor cancelled: it is left to MPI.
  for (Pending& p : pending_) {
    if (p.request == MPI_REQUEST_NULL) continue;
    if (p.recv) MPI_Cancel(&p.request);
    if (!p.coll) MPI_Request_free(&p.request);
    (void)p.keep.release();
    if (p.coll) p.coll->abandon();
    (void)p.coll.release();
  }
  pending_.clear();
  reap_orphans();
  std::lock_guard<std::mutex> lock(orphans_mutex_);
  for (auto& orphan : orphans_) (void)orphan.release();  // still in MPI's hands
  orphans_.clear();
}

void Link::reap_orphans() {
  std::lock_guard<std::mutex> lock(orphans_mutex_);
  for (auto it = orphans_.begin(); it != orphans_.end();) {
    it = test(&(*it)->request()) ? orphans_.erase(it) : it + 1;
  }
}

void Link::orphan(std::unique_ptr<PostedCollective> posted) {
  if (!posted) return;
  posted->abandon();
  std::lock_guard<std::mutex> lock(orphans_mutex_);
  orphans_.push_back(std::move(posted));
}

void Link::abandon_request(int dest, int64_t rid) {
  if (rid == 0 || !liveness_.alive(dest)) return;
  Header h;
  h.kind = kAbandon;
  h.aux = rid;
  post(dest, h, {});
}

void Link::drop_request(int source, int64_t rid) {
  for (Pending& p : pending_) {
    if (p.reply_to != source || p.rid != rid) continue;
    p.reply_to = -1;  // no reply; reaped by poll_pending once MPI completes it
    if (p.coll) p.coll->abandon();
    if (p.recv) MPI_Cancel(&p.request);
    return;
  }
}

void Link::serve_devices(std::vector<int32_t> devices) {
  devices_ = std::move(devices);
  direct_ = true;
}

void Link::go_silent(double seconds) {
  silent_until_.store(now_ns() + static_cast<int64_t>(seconds * 1e9));
}

void Link::go_silent_at_collective(double seconds) {
  silent_at_collective_ns_.store(static_cast<int64_t>(seconds * 1e9));
}

int64_t Link::new_tag() {
  while (true) {  // ends: fewer ids are held (StaleReplies::kMax) than there are tags
    const int64_t tag = kTagBase + (tags_.fetch_add(1) % kTagSpan);
    if (!stale_->holds(tag)) return tag;
  }
}

bool Link::next_message(double timeout, Message* out) {
  std::unique_lock<std::mutex> lock(inbox_mutex_);
  if (!inbox_cv_.wait_for(lock, std::chrono::duration<double>(timeout),
                          [this] { return !inbox_.empty(); }))
    return false;
  *out = std::move(inbox_.front());
  inbox_.pop_front();
  return true;
}

void Link::to_python(Message m) {
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    inbox_.push_back(std::move(m));
  }
  inbox_cv_.notify_one();
}

std::unique_ptr<Call> Link::begin(int dest, Header h, const std::string& payload,
                                  const void* send_buf, void* recv_buf, size_t nbytes) {
  auto call = std::make_unique<Call>();
  call->dest_ = dest;
  if (!liveness_.alive(dest)) {  // nothing is sent to a rank declared dead
    call->dead_ = true;
    return call;
  }
  call->rid_ = h.rid = new_tag();
  call->stale_ = stale_;
  call->data_tag_ = h.tag;
  call->has_data_ = send_buf != nullptr || recv_buf != nullptr;
  call->message_ = std::make_unique<std::string>(framed(h, payload));
  if (recv_buf != nullptr) {  // posted before the request, so the data finds it waiting
    call->data_is_recv_ = true;
    MPI_Irecv(recv_buf, static_cast<int>(nbytes), MPI_BYTE, dest, static_cast<int>(h.tag),
              config_.data, &call->data_);
  }
  MPI_Isend(call->message_->data(), static_cast<int>(call->message_->size()), MPI_BYTE, dest,
            kCtrlTag, config_.ctrl, &call->send_);
  if (send_buf != nullptr) {
    MPI_Isend(send_buf, static_cast<int>(nbytes), MPI_BYTE, dest, static_cast<int>(h.tag),
              config_.data, &call->data_);
  }
  return call;
}

bool Link::post(int dest, Header h, const std::string& payload) {
  auto bytes = std::make_unique<std::string>(framed(h, payload));
  MPI_Request request;
  MPI_Isend(bytes->data(), static_cast<int>(bytes->size()), MPI_BYTE, dest, kCtrlTag, config_.ctrl,
            &request);
  Backoff backoff(200'000, kWaitMinSleepNs, kWaitMaxSleepNs);
  while (!test(&request)) {
    if (!liveness_.alive(dest)) {
      MPI_Request_free(&request);
      (void)bytes.release();  // MPI may still read it
      return false;
    }
    backoff.pause();
  }
  return true;
}

void Link::reply(int dest, int64_t rid, ReplyHead head, const std::string& payload) {
  std::string bytes(sizeof head + payload.size(), '\0');
  std::memcpy(bytes.data(), &head, sizeof head);
  if (!payload.empty()) std::memcpy(bytes.data() + sizeof head, payload.data(), payload.size());
  auto owned = std::make_unique<std::string>(std::move(bytes));
  MPI_Request request;
  MPI_Isend(owned->data(), static_cast<int>(owned->size()), MPI_BYTE, dest, static_cast<int>(rid),
            config_.ctrl, &request);
  Backoff backoff(200'000, kWaitMinSleepNs, kWaitMaxSleepNs);
  while (!test(&request)) {
    if (!liveness_.alive(dest)) {
      MPI_Request_free(&request);
      (void)owned.release();
      return;
    }
    backoff.pause();
  }
}

std::unique_ptr<PostedCollective> Link::post_collective(const Header& h, const int64_t* counts,
                                                        size_t ncounts, std::string* error) {
  auto posted = std::make_unique<PostedCollective>(staging_);
  if (!posted->post(config_.coll, h, counts, ncounts, error)) return nullptr;
  return posted;
}

Outcome Link::wait_collective(std::unique_ptr<PostedCollective>& posted,
                              const std::vector<int>& members, std::string* error) {
  // A collective progresses only while some thread is inside MPI: keep testing, with the
  // bounded spin and short sleeps of every wait here.
  Backoff backoff(kInFlightSpinNs, kWaitMinSleepNs, 100'000);
  while (!test(&posted->request())) {
    for (int member : members) {
      if (!liveness_.alive(member)) {
        // An unfinished nonblocking collective may be neither freed nor cancelled: it
        // keeps its own buffers, never writes device memory, and is freed if it completes.
        orphan(std::move(posted));
        *error = "rank " + std::to_string(member);
        return Outcome::kPeerDead;
      }
    }
    backoff.pause();
  }
  posted->finish();
  return Outcome::kDone;
}

// ---- the progress thread ------------------------------------------------------------------

void Link::loop() {
  int64_t last_busy = 0;
  int64_t idle_ns = kIdleMinNs;
  while (!stop_.load()) {
    if (silent()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    bool busy = false;
    while (!deferred_.empty()) {
      Message m = std::move(deferred_.front());
      deferred_.pop_front();
      handle(m.source, m.head, std::move(m.payload));
    }
    for (int traffic = receive_one(); traffic != 0; traffic = receive_one()) {
      if (traffic > 0) busy = true;
    }
    if (poll_pending()) busy = true;
    heartbeats();
    const int64_t now = now_ns();
    if (busy) {
      last_busy = now;
      idle_ns = kIdleMinNs;
    }
    // Spin right after traffic (the next message is likely soon) and while a transfer or
    // collective is in flight (it progresses only inside MPI calls), yielding the core
    // after the first 50 us; otherwise sleep, longer the longer it stays quiet.
    if (now - last_busy < kPureSpinNs) {
      support::cpu_relax();
    } else if (now - last_busy < kHotNs || now - in_flight_since() < kInFlightSpinNs) {
      sched_yield();
    } else {  // quiet, or a transfer in flight for long (maybe one its peer abandoned)
      std::this_thread::sleep_for(std::chrono::nanoseconds(idle_ns));
      idle_ns = idle_ns * 2 > kIdleMaxNs ? kIdleMaxNs : idle_ns * 2;
    }
  }
}

int Link::receive_one() {
  int flag = 0;
  MPI_Message message;
  MPI_Status status;
  if (MPI_Improbe(MPI_ANY_SOURCE, kCtrlTag, config_.ctrl, &flag, &message, &status) !=
          MPI_SUCCESS ||
      !flag)
    return 0;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string bytes(static_cast<size_t>(count), '\0');
  MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
  const int source = status.MPI_SOURCE;
  liveness_.saw(source);
  if (bytes.size() < sizeof(Header)) return -1;  // malformed: ignored
  Header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.kind == kHeartbeat) return -1;
  handle(source, h, bytes.substr(sizeof h));
  return 1;
}

bool Link::device_range(int64_t slot, int64_t addr, int64_t nbytes, std::string* error) const {
  if (slot < 0 || static_cast<size_t>(slot) >= devices_.size()) {
    *error = "chip slot " + std::to_string(slot) + " out of range on rank " + std::to_string(rank_);
    return false;
  }
  int32_t device = -1;
  const int status = sim_pointer_device(as_ptr(addr), static_cast<size_t>(nbytes), &device);
  if (status != SIMPLER_OK || device != devices_[static_cast<size_t>(slot)]) {
    *error = "device range " + std::to_string(addr) + "+" + std::to_string(nbytes) +
             " is not inside a live allocation of device " +
             std::to_string(devices_[static_cast<size_t>(slot)]) + " on rank " +
             std::to_string(rank_);
    return false;
  }
  return true;
}

void Link::answer(int dest, int64_t rid, int64_t status, int64_t code, const std::string& payload) {
  ReplyHead head{status, code};
  auto bytes = std::make_unique<std::string>(sizeof head + payload.size(), '\0');
  std::memcpy(bytes->data(), &head, sizeof head);
  if (!payload.empty()) std::memcpy(bytes->data() + sizeof head, payload.data(), payload.size());
  Pending p;
  MPI_Isend(bytes->data(), static_cast<int>(bytes->size()), MPI_BYTE, dest, static_cast<int>(rid),
            config_.ctrl, &p.request);
  p.keep = std::move(bytes);
  pending_.push_back(std::move(p));
}

void Link::fail(int dest, int64_t rid, const std::string& message, int64_t code) {
  answer(dest, rid, kNativeError, code, message);
}

void Link::handle(int source, Header h, std::string payload) {
  switch (h.kind) {
    case kHeartbeat:
      return;
    case kAbandon:
      drop_request(source, h.aux);
      return;
    case kCopyTo:
    case kCopyFrom:
    case kLocalCopy:
    case kCollective:
      if (direct_) break;
      [[fallthrough]];
    default:
      to_python(Message{source, h, std::move(payload)});
      return;
  }
  std::string error;
  if (h.kind == kCollective && silent_at_collective_ns_.load() != 0) {
    silent_until_.store(now_ns() + silent_at_collective_ns_.exchange(0));
    deferred_.push_back(Message{source, h, std::move(payload)});
    return;
  }
  if (h.kind == kCollective && refuse_collective_.exchange(false)) {
    fail(source, h.rid, "collective refused (test hook)");
    return;
  }
  if (h.kind == kCollective) {
    if ((h.nbytes > 0 && !device_range(h.slot, h.addr, h.nbytes, &error)) ||
        (h.nbytes2 > 0 && !device_range(h.slot, h.addr2, h.nbytes2, &error))) {
      fail(source, h.rid, error);
      return;
    }
    auto posted = std::make_unique<PostedCollective>(staging_);
    const size_t ncounts = payload.size() / sizeof(int64_t);
    std::vector<int64_t> counts(ncounts);
    if (ncounts) std::memcpy(counts.data(), payload.data(), ncounts * sizeof(int64_t));
    if (!posted->post(config_.coll, h, counts.data(), ncounts, &error)) {
      fail(source, h.rid, error);
      return;
    }
    Pending p;
    p.request = posted->request();
    posted->request() = MPI_REQUEST_NULL;
    p.coll = std::move(posted);
    p.started = now_ns();
    p.reply_to = source;
    p.rid = h.rid;
    pending_.push_back(std::move(p));
    return;
  }
  if (!device_range(h.slot, h.addr, h.nbytes, &error)) {
    fail(source, h.rid, error);
    return;
  }
  const auto n = static_cast<size_t>(h.nbytes);
  if (h.kind == kLocalCopy) {
    if (!device_range(h.aux, h.addr2, h.nbytes, &error)) {
      fail(source, h.rid, error);
      return;
    }
    const int status = sim_memcpy(as_ptr(h.addr), as_ptr(h.addr2), n, SIM_MEMCPY_DEVICE_TO_DEVICE);
    if (status != SIMPLER_OK)
      return fail(source, h.rid, "sim_memcpy (device to device) failed", status);
    answer(source, h.rid, kOk, 0, {});
    return;
  }
  if (h.kind == kCopyTo && h.flow == kInline) {
    if (payload.size() != n) return fail(source, h.rid, "inline copy: payload size mismatch");
    const int status = sim_memcpy(as_ptr(h.addr), payload.data(), n, SIM_MEMCPY_HOST_TO_DEVICE);
    if (status != SIMPLER_OK)
      return fail(source, h.rid, "sim_memcpy (host to device) failed", status);
    answer(source, h.rid, kOk, 0, {});
    return;
  }
  if (h.kind == kCopyFrom && h.flow == kInline) {
    std::string bytes(n, '\0');
    const int status = sim_memcpy(bytes.data(), as_ptr(h.addr), n, SIM_MEMCPY_DEVICE_TO_HOST);
    if (status != SIMPLER_OK)
      return fail(source, h.rid, "sim_memcpy (device to host) failed", status);
    answer(source, h.rid, kOk, 0, bytes);
    return;
  }
  // A bulk transfer straight from / into device memory; the reply once it completed.
  Pending p;
  p.reply_to = source;
  p.rid = h.rid;
  p.started = now_ns();
  const int count = static_cast<int>(h.nbytes);
  if (h.kind == kCopyTo) {
    p.recv = true;
    MPI_Irecv(as_ptr(h.addr), count, MPI_BYTE, static_cast<int>(h.peer), static_cast<int>(h.tag),
              config_.data, &p.request);
  } else {
    MPI_Isend(as_ptr(h.addr), count, MPI_BYTE, static_cast<int>(h.peer), static_cast<int>(h.tag),
              config_.data, &p.request);
  }
  pending_.push_back(std::move(p));
}

int64_t Link::in_flight_since() const {
  int64_t oldest = INT64_MIN;
  for (const Pending& p : pending_) {
    if (p.reply_to >= 0 && (oldest == INT64_MIN || p.started < oldest)) oldest = p.started;
  }
  return oldest == INT64_MIN ? INT64_MIN / 2 : oldest;
}

bool Link::poll_pending() {
  bool any = false;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!test(&it->request)) {
      ++it;
      continue;
    }
    any = true;
    if (it->coll) it->coll->finish();
    const int reply_to = it->reply_to;
    const int64_t rid = it->rid;
    it = pending_.erase(it);
    if (reply_to >= 0) answer(reply_to, rid, kOk, 0, {});
  }
  return any;
}

void Link::heartbeats() {
  const int64_t now = now_ns();
  if (now - last_beat_ < static_cast<int64_t>(config_.heartbeat * 1e9)) return;
  last_beat_ = now;
  reap_orphans();               // rare (a collective abandoned); at the heartbeats' pace
  stale_->drain(config_.ctrl);  // rare too (a request given up on)
  Header h;
  h.kind = kHeartbeat;
  for (int peer : config_.peers) {
    if (!liveness_.alive(peer)) continue;
    Pending p;
    p.keep = std::make_unique<std::string>(framed(h, {}));
    MPI_Isend(p.keep->data(), static_cast<int>(p.keep->size()), MPI_BYTE, peer, kCtrlTag,
              config_.ctrl, &p.request);
    pending_.push_back(std::move(p));
  }
}

}  // namespace simpler::mpi
