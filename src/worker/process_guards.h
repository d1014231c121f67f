// Per-process facts the worker layer needs: which fork of the process this is, and the
// place where contexts that must never be torn down are pinned.
#pragma once

#include <cstdint>
#include <memory>

namespace simpler {

class ChipWorker;

// Incremented in every forked child (pthread_atfork), so "is this the process that bound
// the context?" is a load and a compare instead of a getpid() system call.
uint64_t fork_epoch() noexcept;

// Keeps `chip` alive (never finalized, never unloaded) until the process exits.
void pin_for_process_lifetime(std::unique_ptr<ChipWorker> chip) noexcept;
size_t pinned_chip_worker_count() noexcept;

}  // namespace simpler
