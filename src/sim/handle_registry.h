// Live handles of one kind (streams or events). A handle is an opaque token minted from a
// counter, never an address, so a destroyed handle stays invalid forever (no ABA when
// memory is reused) and a handle of the wrong kind is never found.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "simpler/abi/status.h"

namespace simpler::sim {

template <class T>
class HandleRegistry {
 public:
  // `kind_tag` in [1, 3] distinguishes the kinds of handle.
  explicit HandleRegistry(uint64_t kind_tag) : kind_tag_(kind_tag) {}

  uint64_t add(std::shared_ptr<T> object) {
    std::unique_lock lock(mutex_);
    const uint64_t handle = (next_id_++ << 2) | kind_tag_;
    live_.emplace(handle, std::move(object));
    return handle;
  }

  std::shared_ptr<T> find(uint64_t handle) const {
    std::shared_lock lock(mutex_);
    auto it = live_.find(handle);
    return it == live_.end() ? nullptr : it->second;
  }

  // Runs fn(T&) while the handle is guaranteed live (no reference-count traffic; the
  // hot path of enqueueing). fn must not block. SIM_ERR_INVALID_HANDLE if not live.
  template <class Fn>
  int with(uint64_t handle, Fn&& fn) const {
    std::shared_lock lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) return SIM_ERR_INVALID_HANDLE;
    return fn(*it->second);
  }

  std::shared_ptr<T> remove(uint64_t handle) {
    std::unique_lock lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) return nullptr;
    std::shared_ptr<T> object = std::move(it->second);
    live_.erase(it);
    return object;
  }

  // fn(const std::shared_ptr<T>&) for every live object, under the shared lock (fn must
  // not call back into the registry).
  template <class Fn>
  void for_each(Fn&& fn) const {
    std::shared_lock lock(mutex_);
    for (const auto& entry : live_) fn(entry.second);
  }

  template <class Pred>
  std::vector<std::shared_ptr<T>> remove_if(Pred&& pred) {
    std::vector<std::shared_ptr<T>> removed;
    std::unique_lock lock(mutex_);
    for (auto it = live_.begin(); it != live_.end();) {
      if (pred(*it->second)) {
        removed.push_back(std::move(it->second));
        it = live_.erase(it);
      } else {
        ++it;
      }
    }
    return removed;
  }

 private:
  const uint64_t kind_tag_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<T>> live_;
  uint64_t next_id_ = 1;
};

}  // namespace simpler::sim
