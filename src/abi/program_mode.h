// simpler runtime host — a context in program mode: the runtime owns the device.
//
// The context owns a stream on its device; a launched run is a device job on that
// stream (so runs of one context execute in launch order) that runs Engine::execute.
// The Engine (rings and threads) is created at init when a prewarm config is given,
// else at the first prepare_run; a later run whose config asks for different ring sizes
// recreates it when no run is outstanding (else PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "abi/build_traits.h"
#include "abi/callable.h"
#include "abi/device_claims.h"
#include "abi/driver.h"
#include "abi/program_run.h"
#include "abi/staging.h"
#include "engine/engine.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::rt::host {

struct ProgramCallable {
  DeviceAllocation code;  // the uploaded image; `resident` points into it
  ResidentCallable resident;
  uint32_t runs_using = 0;  // prepared, not yet finalized runs
};

class ProgramMode {
 public:
  ProgramMode(const BuildTraits& traits, int32_t device, DeviceClaim claim);
  ~ProgramMode();
  ProgramMode(const ProgramMode&) = delete;
  ProgramMode& operator=(const ProgramMode&) = delete;

  // Makes the device current on the calling thread, creates the context's stream and,
  // with a prewarm config, the Engine. Throws AbiError after rolling back what it could.
  void open(const SimplerCallConfig* prewarm);

  int64_t register_callable(const void* image, size_t size);
  void unregister_callable(int64_t callable_id);

  uint64_t prepare_run(int64_t callable_id, const ChipStorageTaskArgs& args,
                       const SimplerCallConfig* config);
  void launch_run(uint64_t run_id);
  bool poll_run(uint64_t run_id);
  int wait_run(uint64_t run_id, int64_t timeout_us);
  int finalize_run(uint64_t run_id);

  uint64_t malloc(size_t size);
  void free(uint64_t device_ptr);
  void copy_to(uint64_t dst_device, const void* src_host, size_t size);
  void copy_from(void* dst_host, uint64_t src_device, size_t size);
  void memory_info(uint64_t* out_free, uint64_t* out_total);

  uint64_t committed_bytes() const;
  int finalize();  // waits for the context's launched runs first
  // The host gives up on the context (a run stuck past its grace period): refuses all
  // further calls, releases the device claim, keeps everything else (see abandon_context).
  void abandon();
  bool holds_resources() const;  // locks

 private:
  enum class Phase { Opening, Open, Closing, Closed, Abandoned };

  void require_open() const;  // mutex_ held
  // After a caught fault or a watchdog timeout (sticky): throws the poisoning status.
  void require_healthy() const;                                 // mutex_ held
  void leak_programs_of_abandoned_engine();                     // mutex_ held
  std::shared_ptr<ProgramRun> find_run(uint64_t run_id) const;  // mutex_ held; throws
  // for_all_runs: a prewarm config (its watchdog becomes the context's default).
  Engine* ensure_engine(const SimplerCallConfig* config, bool for_all_runs);  // mutex_ held
  void check_device_range(uint64_t device_ptr, size_t size, const char* what) const;
  int release_all();                    // mutex_ held
  void renew_stream_after_error();      // mutex_ held
  bool holds_resources_locked() const;  // mutex_ held

  struct JobHandle;
  static int run_job(void* job);
  static void finish_job(void* job);

  const BuildTraits& traits_;
  const int32_t device_;

  mutable std::mutex mutex_;
  Phase phase_ = Phase::Opening;
  DeviceClaim claim_;
  DeviceEpoch epoch_;  // a sim_device_reset after open took the stream and all memory
  sim_stream_t stream_ = nullptr;
  std::atomic<bool> stream_failed_{false};  // set by a skipped job's cleanup
  // Launched jobs not yet started: a run whose job finds another queued behind it tells
  // the engine that the next run follows at once (Engine::execute next_follows).
  std::atomic<int64_t> jobs_queued_{0};
  std::unique_ptr<Engine> engine_;
  SimplerCallConfig engine_config_{};
  std::map<int64_t, std::unique_ptr<ProgramCallable>> callables_;
  int64_t next_callable_id_ = 0;
  std::map<uint64_t, std::shared_ptr<ProgramRun>> runs_;
  uint64_t next_run_id_ = 1;
  std::map<uint64_t, DeviceAllocation> allocations_;  // simpler_device_malloc, by address
  // Device memory whose release failed after its owner went away (a finalized run's
  // staging, an unregistered callable's code); finalize_device frees it.
  std::vector<Staging> leftover_staging_;
  std::vector<DeviceAllocation> leftover_blocks_;
};

}  // namespace simpler::rt::host
