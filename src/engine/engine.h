// simpler runtime — the execution engine shared by both runtime builds (internal).
//
// An Engine is one device context's simulated chip: orchestrator + scheduler "AICPU"
// threads and the per-core executors of the device's clusters. It executes one loaded
// program at a time. Threads park when idle. Everything it allocates on the device goes
// through the sim driver on the engine's device, so committed_bytes() is exact.
//
// Threads: min(aicpu_thread_num - 1, clusters) scheduler threads, started by create() and
// parked between runs (no thread is created per execute()). The remaining AICPU thread,
// the orchestrator, is the thread that calls execute(): it runs the orchestration inline,
// so a run costs no hand-off to another thread. Each scheduler owns whole clusters and
// runs their cores' kernels itself.
// Defaults for zero SimplerCallConfig fields (engine_defaults.h): task window 1024 tasks,
// heap ring 64 MiB (device memory, sim_malloc'd once at create), dependency pool 16384
// edges, tensor map 65536 entries, no watchdog, aicpu_thread_num from the device
// topology (4). A config whose struct_size is 0 means "all defaults".
//
// Faults and hangs (the sticky failed state, CUDA's model): kernels and the orchestration
// run under a fault guard (fault_guard.h); a signal they raise fails the run and poisons
// the engine. With a watchdog (watchdog_timeout_ms != 0) the orchestration runs on the
// engine's own thread (run_thread.h) while the caller of execute() polls the watchdog; a
// run without progress for the timeout fails with SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT,
// execute() returns at once, the stuck thread is abandoned and the engine poisoned.
// A poisoned engine refuses every later execute() with the poisoning status; only
// release() is allowed.
// The orchestration API semantics (scopes, rings, back-pressure, deadlock detection) are
// described in orchestrator.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "run_track.h"
#include "simpler/abi/chip_types.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt {

struct EngineOptions {
  int32_t device = 0;
  // Defaults: the device topology from the sim driver; rings from SimplerCallConfig
  // (0 fields -> built-in defaults).
  SimplerCallConfig config{};
  // host_build_graph: run the whole orchestration first (on the calling thread), then
  // dispatch the finished graph. Graph capacity overflow -> PTO_RUNTIME_ERR_CAPACITY_EXCEEDED.
  bool build_graph_first = false;
  // Kernel mode: number each run's diagnostics files (launch-000001.<name>, ...) instead
  // of overwriting them (run_diagnostics.h).
  bool number_diagnostics = false;
};

// A ChipCallable's orchestration and kernels, loaded from bytes (private temp file,
// dlopen RTLD_LOCAL, unlink at once) with their entry points resolved.
class LoadedProgram {
 public:
  // Returns 0, or SIMPLER_CHIP_ERR_ORCH_LOAD_FAILED / PTO_RUNTIME_ERR_INVALID_ARGUMENT
  // with `error` saying what failed. Nothing is left in the temp directory either way.
  static int load(const ChipCallableView& callable, std::unique_ptr<LoadedProgram>* out,
                  std::string* error);
  ~LoadedProgram();
  LoadedProgram(const LoadedProgram&) = delete;
  LoadedProgram& operator=(const LoadedProgram&) = delete;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit LoadedProgram(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Engine {
 public:
  // Allocates the rings on options.device (which must be current on the calling thread)
  // and starts the parked threads. Returns 0 or a negative status.
  static int create(const EngineOptions& options, std::unique_ptr<Engine>* out, std::string* error);
  ~Engine();  // joins threads, frees device memory
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs the program to completion on the calling thread's behalf (blocking). `args` hold
  // DEVICE-space tensors only (staging happens above). `run_config` may override
  // diagnostics and the watchdog; ring sizes are fixed at create(). Returns 0 or a
  // negative chip status (SIMPLER_CHIP_ERR_*, or PTO_RUNTIME_ERR_CAPACITY_EXCEEDED for a
  // host-built graph that does not fit); `error` gets the latched message.
  // More precisely: args that disagree with the program's signature (counts, a HOST
  // tensor, an invalid view) or a bad run_config -> PTO_RUNTIME_ERR_INVALID_ARGUMENT
  // before anything runs; after release() -> PTO_RUNTIME_ERR_INVALID_STATE; a diagnostics
  // file that cannot be written -> PTO_RUNTIME_ERR_INVALID_ARGUMENT (only if the run
  // itself succeeded). After an error the tasks not yet started are skipped; kernels
  // already running are waited for (a simulated core cannot be preempted), so execute()
  // returns once every started kernel returned. Calls are serialized (thread-safe).
  // Without a watchdog both modes run the orchestration on the calling thread; with one,
  // on the engine's runner thread while the calling thread polls the watchdog (a kernel
  // that never returns then fails the run within about the timeout). After a caught
  // fault or a timeout every later call returns that status (sticky).
  //
  // Pipelined runs (program mode): given `on_done`, a run whose config (or the create
  // config) has pipeline_depth D > 1 starts its orchestration once at most D - 1 earlier
  // runs are still executing, and execute() returns as soon as the orchestration returned,
  // with 0 and *deferred = true: `on_done` then reports the run's status and message once,
  // from the thread that finished its last task (possibly before execute() returns). Its
  // tasks depend on the earlier runs' tasks through the tensor map as within one run. An
  // error fails only the run it happened in (its remaining tasks are skipped); a crash or
  // a timeout fails every run in flight. A run with diagnostics flags or a watchdog, and
  // every run without `on_done`, is not pipelined (D = 1): it starts after every earlier
  // run finished and execute() returns when it finished, as always.
  // `next_follows` (a hint): the caller calls execute() again as soon as this one returns
  // (its queue holds the next run). A pipelined run's end then leaves the parked
  // schedulers parked (one is woken only if none is awake for ready work): this thread
  // orchestrates the next run at once, and a scheduler woken for the gap would only take
  // a hardware thread from it.
  int execute(const LoadedProgram& program, const ChipStorageTaskArgs& args,
              const SimplerCallConfig* run_config, std::string* error, RunDone on_done = {},
              bool* deferred = nullptr, bool next_follows = false);
  // execute(program, args, nullptr, error) for a caller that has already checked every
  // entry tensor the way execute() would (valid descriptor, DEVICE space, live buffer):
  // a kernel-mode launch checks its args when it is enqueued, and the record it runs is
  // a copy of exactly those args, so the per-tensor checks are not repeated per run.
  int execute_checked(const LoadedProgram& program, const ChipStorageTaskArgs& args,
                      std::string* error);

  uint64_t committed_bytes() const;  // device bytes held by this engine

  // True once a watched run was abandoned: one of the engine's threads may still be inside
  // a kernel or the orchestration, so the programs it ran must stay loaded for the life of
  // the process (callers leak them), and release()/the destructor leak the engine's own
  // memory (the heap ring stays allocated on the device) instead of freeing it under that
  // thread.
  bool abandoned() const;
  // The poisoning status (a caught signal, a watchdog timeout) with its message, or
  // SIMPLER_OK while the engine is healthy.
  int sticky_error(std::string* message) const;
  int32_t device() const;

  // Stops the threads and frees the device memory (the destructor does the same, ignoring
  // a failed free). Returns 0, or the sim driver's status of a failed free, which keeps
  // the memory for a retry. Afterwards execute() -> PTO_RUNTIME_ERR_INVALID_STATE and,
  // once it returned 0, committed_bytes() == 0. Idempotent. Not concurrent with execute().
  // After an abandoned run it does not wait for the stuck thread and returns 0.
  int release(std::string* error);

  struct Impl;

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  int run(const LoadedProgram& program, const ChipStorageTaskArgs& args,
          const SimplerCallConfig* run_config, std::string* error, RunDone on_done, bool* deferred,
          bool check_entry_tensors, bool next_follows);
  std::unique_ptr<Impl> impl_;
};

}  // namespace simpler::rt
