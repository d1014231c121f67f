#include "abi/context_registry.h"

#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_map>

#include "abi/abi_error.h"
#include "abi/context.h"
#include "simpler/abi/status.h"

namespace simpler::rt::host {
namespace {

class Registry {
 public:
  Registry() = default;
  // At unload or exit, contexts still live were leaked on purpose by their host (e.g. a
  // ChipWorker collected on a foreign thread): they stay leaked, never torn down from a
  // static destructor while the driver may already be gone.
  ~Registry() {
    // (If even that allocation fails, the context is torn down after all.)
    for (auto& [handle, context] : live_) (void)new (std::nothrow) ContextRef(std::move(context));
  }
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  SimplerDeviceContext* add(ContextRef context) {
    SimplerDeviceContext* handle = context.get();
    std::unique_lock lock(mutex_);
    live_.emplace(handle, std::move(context));
    return handle;
  }
  ContextRef find(const SimplerDeviceContext* handle) const {
    std::shared_lock lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) refuse(handle);
    return it->second;
  }
  ContextLease lease(const SimplerDeviceContext* handle) const {
    std::shared_lock lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) refuse(handle);
    return ContextLease(std::move(lock), *it->second);
  }
  void remove(const SimplerDeviceContext* handle, void (*check)(SimplerDeviceContext&)) {
    ContextRef doomed;  // destroyed after the lock is dropped
    std::unique_lock lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end()) refuse(handle);
    check(*it->second);
    doomed = std::move(it->second);
    live_.erase(it);
  }

 private:
  [[noreturn]] static void refuse(const SimplerDeviceContext* handle) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         handle == nullptr ? std::string("ctx is NULL; pass a context from context_create")
                           : std::string("ctx is not a live context of this runtime build "
                                         "(destroyed already, or never created by it)"));
  }

  mutable std::shared_mutex mutex_;
  std::unordered_map<const SimplerDeviceContext*, ContextRef> live_;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

SimplerDeviceContext* register_new_context(const BuildTraits& traits) {
  return registry().add(std::make_shared<SimplerDeviceContext>(traits));
}

ContextRef find_context(const SimplerDeviceContext* handle) { return registry().find(handle); }

ContextLease lease_context(const SimplerDeviceContext* handle) { return registry().lease(handle); }

void unregister_context(const SimplerDeviceContext* handle,
                        void (*check_may_destroy)(SimplerDeviceContext& context)) {
  registry().remove(handle, check_may_destroy);
}

}  // namespace simpler::rt::host
