// simpler runtime host — a context in kernel mode: the caller owns the device and the
// stream; this context owns a code arena, an Engine and its launch records.
//
// Rules (spec/kernel-mode.md, "C ABI"): prepare uploads a callable into the arena and
// mints a sequential id; launch checks, copies the args into a pooled record and enqueues
// a device job on the caller's stream (no malloc/free, no stream/event creation, no
// synchronize); finalize releases only what the context owns and refuses while launches
// are unfinished.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <unordered_map>
#include "abi/build_traits.h"

#include "abi/callable.h"
#include "abi/checked_args.h"
#include "abi/code_arena.h"
#include "abi/device_claims.h"
#include "abi/error_slot.h"
#include "abi/launch_pool.h"
#include "engine/engine.h"
#include "simpler/abi/chip_types.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::rt::host {

struct KernelLimits {
  static constexpr int64_t kMaxCallables = 8192;                 // ids are 0..8191
  static constexpr size_t kDefaultArenaBytes = size_t{1} << 30;  // limit: 1 GiB
  static constexpr size_t kArenaBlockBytes = size_t{4} << 20;    // committed per block
  static constexpr size_t kMinArenaBytes = 4096;
  static constexpr size_t kMaxArenaBytes = size_t{1} << 40;  // the largest simulated device
  // SIMPLER_KERNEL_CODE_ARENA_BYTES overrides the arena's limit (the first block is
  // min(kArenaBlockBytes, limit); more blocks are added as callables are prepared).
  // Throws AbiError INVALID_ARGUMENT naming the variable when it is not a number in
  // [kMinArenaBytes, kMaxArenaBytes] (an overflowing number included).
  static size_t arena_bytes_from_environment();
};

class KernelMode {
 public:
  KernelMode(const BuildTraits& traits, int32_t device, uint64_t generation, DeviceClaim claim);
  ~KernelMode();
  KernelMode(const KernelMode&) = delete;
  KernelMode& operator=(const KernelMode&) = delete;

  // Commits the static resources (code arena, Engine rings). Throws AbiError after
  // rolling back what it could; whatever could not be released stays for finalize().
  void commit(const SimplerCallConfig& config, size_t arena_bytes);
  int64_t prepare(const void* image, size_t size);  // throws AbiError
  void launch(int64_t callable_id, const ChipStorageTaskArgs& args, sim_stream_t stream);  // throws
  uint64_t committed_bytes() const;
  // SIMPLER_OK, or a failed release's status (the rest is kept for a retry). Throws
  // AbiError INVALID_STATE while launches are unfinished.
  int finalize();
  bool holds_resources() const;  // locks
  uint64_t generation() const { return generation_; }
  // The message of the latest launch that failed on the chip, "" if none.
  std::string last_launch_error() const { return launch_error_.get(); }

 private:
  enum class Phase { Committing, Open, Poisoned, Closing, Closed };

  static int run_launch(void* record);
  static void finish_launch(void* record);
  int release_all();                    // mutex_ held
  bool holds_resources_locked() const;  // mutex_ held
  const char* phase_refusal() const;
  void check_stream(sim_stream_t stream);  // mutex_ held
  [[noreturn]] static void refuse_stream(int status);

  const BuildTraits& traits_;
  const int32_t device_;
  const uint64_t generation_;
  ErrorSlot launch_error_;  // the latest launch that failed on the chip (asynchronous)

  mutable std::mutex mutex_;  // prepare, launch (up to the enqueue), finalize
  Phase phase_ = Phase::Committing;
  DeviceEpoch epoch_;  // a sim_device_reset after commit took the arena and the heap
  DeviceClaim claim_;
  CodeArena arena_;
  std::unique_ptr<Engine> engine_;
  std::vector<ResidentCallable> callables_;  // index == id
  // Per callable (index == id): the tensors of its latest launch that passed every check.
  std::vector<std::unique_ptr<CheckedArgs>> checked_args_;
  // The device memory generation at which a launch last found the context Open and its
  // device not reset; while it reads the same, no reset happened since (a reset changes it).
  uint64_t open_at_generation_ = 0;
  bool open_checked_ = false;
  // Content hash -> ids with that hash, to share the loaded program of identical images.
  std::unordered_multimap<size_t, size_t> ids_by_hash_;

  // The last stream found live on device_ (mutex_ held). Stream handles are never reused
  // and a stream never changes device, so only a destroyed stream can make it stale, and
  // the enqueue itself reports that (SIM_ERR_INVALID_HANDLE, before anything is queued).
  sim_stream_t checked_stream_ = nullptr;

  LaunchPool pool_;
  // Launches in flight = launched_ - finished_. Two counters on separate lines: the
  // launching thread counts under mutex_, the executor after each launch, and neither
  // pulls the other's line on the hot path.
  uint64_t launched_ = 0;  // mutex_ held
  alignas(64) std::atomic<uint64_t> finished_{0};
};

}  // namespace simpler::rt::host
