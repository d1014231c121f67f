// simpler runtime — built-in sizes and limits of the engine (internal).
//
// A zero field of SimplerCallConfig means "use the default" below.
#pragma once

#include <cstdint>

namespace simpler::rt {

inline constexpr uint64_t kDefaultTaskWindow = 1024;            // tasks in flight
inline constexpr uint64_t kDefaultHeapRingBytes = 64ull << 20;  // 64 MiB of device memory
inline constexpr uint64_t kDefaultDepPoolSize = 16384;          // dependency edges in flight
inline constexpr uint64_t kDefaultTensorMapCapacity = 65536;    // live tensor-map entries
inline constexpr int32_t kDefaultAicpuThreads = 4;              // 1 orchestrator + 3 schedulers

// Host bytes of task arguments (tensor descriptors + kernel argv) per window slot; a
// task's arguments are at most 32 * 120 + 64 * 8 bytes, so one task always fits.
inline constexpr uint64_t kArenaBytesPerSlot = 1024;
inline constexpr uint64_t kMinArenaBytes = 64 * 1024;
inline constexpr uint64_t kArenaAlignment = 64;

inline constexpr uint64_t kHeapAlignment = 1024;  // runtime-allocated tensors
inline constexpr uint32_t kMaxBlockNum = 65535;   // SPMD width of one task
inline constexpr size_t kMaxScopeDepth = 256;

// A submit wakes a parked scheduler only when this many tasks of its core type are ready
// (the orchestrator drains fewer itself when it waits), and at most once per stride.
inline constexpr uint64_t kWakeDepth = 8;
// Ready blocks queued above which the submitting thread runs one itself although a
// scheduler is awake (work-first; below it, the awake schedulers take them).
inline constexpr uint64_t kInlineDepth = 4;
inline constexpr uint64_t kWakeStride = 64;
// How long a submit waits (pauses) for the latest task's short producer to finish on a
// scheduler, to run the latest task itself (Orchestrator::submit).
inline constexpr uint32_t kTakeBackSpins = 128;
// How long a woken scheduler takes to start running here (a futex wake-up on a small VM):
// the orchestrator wakes at most one per this interval while none is awake.
inline constexpr int64_t kSchedulerStartNs = 50'000;

}  // namespace simpler::rt
