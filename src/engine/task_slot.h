// simpler runtime — one entry of the task window ring (internal).
//
// Written by the orchestrator while the task is invisible to the schedulers, published
// by the last dependency release (an acq_rel decrement of `pending`), then read by the
// schedulers. The orchestrator may reuse the slot only after it observed done_id == id
// (acquire); the completing scheduler touches nothing of the slot after that store.
#pragma once

#include <atomic>
#include <cstdint>

#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt {

struct TaskSlot;
struct RunTrack;

// A dependency edge from a producer's fanout list to a consumer. Lives in the dependency
// pool; freed when the consumer's slot is reclaimed (by then every producer has walked
// past it).
struct Edge {
  TaskSlot* consumer;
  Edge* next;
};

struct alignas(64) TaskSlot {
  // ---- published to the schedulers ----
  simpler_kernel_entry_fn entry = nullptr;
  const int64_t* args = nullptr;  // tensor descriptor addresses, then scalar bit patterns
  uint32_t arg_count = 0;
  uint32_t block_num = 1;
  uint32_t core_type = 0;
  int32_t func_id = 0;
  uint64_t id = 0;
  RunTrack* run = nullptr;  // the run that submitted it: its status, its completion

  // ---- shared, atomic ----
  std::atomic<int32_t> pending{0};       // unfinished producers + the orchestrator's guard
  std::atomic<uint32_t> next_block{0};   // SPMD: next block index to hand to a core
  std::atomic<uint32_t> blocks_done{0};  // SPMD: finished blocks
  std::atomic<Edge*> fanout{nullptr};    // consumers; the closed sentinel once complete
  std::atomic<uint64_t> done_id{0};      // == id once the task completed

  // ---- orchestrator-private ----
  uint64_t dedup_stamp = 0;   // id of the last consumer that linked to this task
  uint64_t arena_end = 0;     // argument-arena position released with this slot
  uint64_t pool_end = 0;      // dependency-pool position released with this slot
  uint64_t scope_serial = 0;  // the scope that pins this task (depth 0: none)
  uint32_t scope_depth = 0;
};

}  // namespace simpler::rt
