// simpler runtime host — one program-mode run: its device-side args, staging, and
// completion (set by the device job's cleanup, which always runs).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "abi/staging.h"
#include "engine/engine.h"
#include "simpler/abi/chip_types.h"

namespace simpler::rt::host {

struct ProgramCallable;

struct ProgramRun {
  uint64_t id = 0;
  int64_t callable_id = -1;
  ProgramCallable* callable = nullptr;  // its runs_using count keeps it registered
  Engine* engine = nullptr;             // fixed at prepare; not replaced while runs exist
  ChipStorageTaskArgs device_args{};    // HOST tensors rewritten to their staged copies
  SimplerCallConfig config{};
  bool has_config = false;
  Staging staging;

  // Guarded by ProgramMode's mutex.
  bool launched = false;
  bool finalizing = false;

  // Completion, guarded by `mutex`.
  std::mutex mutex;
  std::condition_variable finished;
  bool executed = false;   // the device job ran execute()
  bool completed = false;  // the run's status is final (a pipelined run: its callback)
  bool job_finished = false;
  bool done = false;  // completed and the job's cleanup ran
  int status = 0;
  std::string error;

  // Blocks until done or the timeout (< 0: forever). True when done.
  bool wait_done(int64_t timeout_us);
  // `mutex` held: done once both the status is final and the job's cleanup ran. True when
  // this call made it done: the caller then calls `finished.notify_all()` after unlocking
  // (a waiter woken under the lock would block on it at once and be woken a second time,
  // each wake-up taking the CPU of the orchestrating thread that completed the run).
  [[nodiscard]] bool settle();
};

}  // namespace simpler::rt::host
