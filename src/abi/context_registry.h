// simpler runtime host — the live contexts of this build: handles are validated, never
// trusted.
//
// The C ABI hands out SimplerDeviceContext* but never dereferences one it did not find
// here, so destroying a context twice, or passing a destroyed, foreign or garbage
// pointer, is INVALID_ARGUMENT instead of a crash. A lookup returns shared ownership: a
// destroy racing with a call on another thread only unregisters the handle; the context
// dies when the last call using it returns. One registry per loaded build (process-wide
// by nature: the handles are process-wide).
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>

#include "abi/build_traits.h"

struct SimplerDeviceContext;

namespace simpler::rt::host {

using ContextRef = std::shared_ptr<SimplerDeviceContext>;

// Creates and registers a fresh context.
SimplerDeviceContext* register_new_context(const BuildTraits& traits);
// The live context behind `handle`; throws AbiError INVALID_ARGUMENT when `handle` is
// NULL or not a live context of this build.
ContextRef find_context(const SimplerDeviceContext* handle);
// A context found under the registry's shared lock, held for the lease's life: no
// reference-count traffic (the kernel-mode launch's hot path). A destroy of any context
// waits until the lease ends, so hold one only for a call that never blocks for long.
class ContextLease {
 public:
  ContextLease(std::shared_lock<std::shared_mutex> lock, SimplerDeviceContext& context)
      : lock_(std::move(lock)), context_(&context) {}
  SimplerDeviceContext& operator*() const { return *context_; }

 private:
  std::shared_lock<std::shared_mutex> lock_;
  SimplerDeviceContext* context_;
};
// Like find_context, without shared ownership.
ContextLease lease_context(const SimplerDeviceContext* handle);
// Unregisters `handle` when `may_destroy(context)` says so (called under the registry's
// lock, so two destroys never both pass). Throws AbiError like find_context.
void unregister_context(const SimplerDeviceContext* handle,
                        void (*check_may_destroy)(SimplerDeviceContext& context));

}  // namespace simpler::rt::host
