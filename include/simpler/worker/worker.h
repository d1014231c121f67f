// simpler — Worker(level=2): the public object frameworks hold.
//
// execution_mode "program" (default): the runtime owns the device (register, run/submit,
// device memory). execution_mode "kernel": the caller owns the device and the stream;
// simpler enqueues whole chip programs on the caller's stream (spec/kernel-mode.md,
// "Worker"). The mode is fixed at construction. Thread-safe.
//
// Errors: std::invalid_argument (bad value), std::runtime_error (wrong state or mode,
// "Worker.<api>: requires ..."), ChipWorkerError (native status), WorkerTimeoutError,
// NotImplementedYet (level 3), RuntimeBuildNotFound (missing build).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "simpler/task/task_interface.h"
#include "simpler/worker/chip_worker.h"
#include "simpler/worker/errors.h"
#include "simpler/worker/host_buffer.h"
#include "simpler/worker/run_handle.h"

namespace simpler {

enum class ExecutionMode { PROGRAM, KERNEL };
enum class WorkerState { NEW, READY, FAILED, CLOSED };
const char* worker_state_name(WorkerState state);
const char* execution_mode_name(ExecutionMode mode);  // "program" / "kernel"

struct WorkerOptions {
  int level = 2;
  int32_t device_id = 0;
  std::string platform = "a2a3sim";
  std::string runtime = "tensormap_and_ringbuffer";
  std::string execution_mode = "program";  // "program" or "kernel"
  bool enable_sdma = false;
  std::string lib_dir;  // where runtime builds live; empty = default_lib_dir()
};

namespace detail {
struct WorkerCore;
}

class Worker {
 public:
  // Validates only (touches no runtime, probe or device): level 3 -> NotImplementedYet;
  // other levels != 2 -> invalid_argument; unknown mode, kernel with level != 2 or with
  // enable_sdma -> invalid_argument.
  explicit Worker(WorkerOptions options = {});
  // An unclosed READY kernel Worker logs a warning and leaks its ChipWorker (never
  // finalized on the destroying thread); a program Worker is closed best-effort.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  const WorkerOptions& options() const noexcept;
  ExecutionMode execution_mode() const noexcept;
  WorkerState state() const noexcept;

  // Probe before init (cached per Worker; errors are not cached); false for level != 2;
  // true for a READY kernel Worker without probing.
  bool kernel_mode_supported();

  // Program mode: init(prewarm_config); `config` refused. Kernel mode: init(nullopt,
  // config) — config required, prewarm_config refused, config.validate() first.
  void init(const std::optional<CallConfig>& prewarm_config = std::nullopt,
            const std::optional<CallConfig>& config = std::nullopt);

  // ---- program mode ------------------------------------------------------------------
  // Throws "Worker.<api>: requires execution_mode='program'" on a kernel Worker.
  void require_program_api(const char* api) const;
  CallableHandle register_callable(const ChipCallable& callable);  // before or after init
  void unregister_callable(CallableHandle handle);
  // The signature of the callable registered under `handle` (bindings pack arguments
  // against it).
  std::vector<ArgSpec> registered_arg_specs(CallableHandle handle, const char* api);
  // The signature of a callable this Worker registered (throws like run() for a foreign
  // or unknown handle): lets a binding refuse read-only host memory passed as an output.
  std::vector<ArgDirection> callable_signature(CallableHandle handle, const char* api = "run");
  void run(CallableHandle handle, const ChipStorageTaskArgs& args,
           const std::optional<CallConfig>& config = std::nullopt);
  // `api` names the caller's API in messages (the Python run() waits on a submit).
  RunHandle submit(CallableHandle handle, const ChipStorageTaskArgs& args,
                   const std::optional<CallConfig>& config = std::nullopt,
                   const char* api = "submit");
  // A run follows the earlier runs still in flight that write host memory it reads or
  // writes (their copy-back first). submit waits for them; submit_within waits at most
  // `slice` and returns nullopt, having submitted nothing, when that was not enough (call
  // again: an interruptible wait, as the Python binding's).
  std::optional<RunHandle> submit_within(CallableHandle handle, const ChipStorageTaskArgs& args,
                                         const std::optional<CallConfig>& config,
                                         std::chrono::microseconds slice,
                                         const char* api = "submit");
  uint64_t malloc(size_t size);
  void free(uint64_t device_ptr);  // only pointers this Worker's malloc returned
  void copy_to(uint64_t dst_device, const void* src_host, size_t size);
  void copy_from(void* dst_host, uint64_t src_device, size_t size);
  std::shared_ptr<HostBuffer> create_buffer(size_t nbytes);
  // A contiguous HOST tensor over host memory [host_addr, host_addr + nbytes).
  ChipTensor make_tensor_arg(uint64_t host_addr, size_t nbytes, std::span<const int64_t> shape,
                             DataType dtype);
  // Refused while a submitted, unfinished run uses the buffer.
  void release_buffer(const HostBuffer& buffer);
  DeviceMemoryInfo device_memory_info();

  // ---- kernel mode -------------------------------------------------------------------
  int64_t kernel_prepare_callable(const ChipCallable& callable);
  // Throws what kernel_launch/kernel_prepare_callable would for the worker's own state
  // (mode, READY, forked child); lets a binding check its arguments in the spec's order.
  void require_kernel_ready(const char* api) const;
  // The signature of the callable `callable_id` was prepared from (read once, at prepare):
  // the same checks as kernel_launch (mode, READY, fork, the lock held by nobody else, an
  // id this Worker minted). Bindings pack borrowed arguments against it before the launch.
  std::shared_ptr<const std::vector<ArgSpec>> kernel_arg_specs(int64_t callable_id,
                                                               const char* api) const;
  // caller_stream: the caller's sim_stream_t (nonzero). `api` names the call in error
  // messages ("kernel_launch" -> "Worker.kernel_launch", or a qualified name as is).
  void kernel_launch(int64_t callable_id, const ChipStorageTaskArgs& args, void* caller_stream,
                     const char* api = "kernel_launch");
  // The runtime's message for the most recent launch of this Worker that failed on the
  // chip ("" if none): the caller's stream reports only the status of such a failure.
  std::string kernel_launch_error();

  // ---- both --------------------------------------------------------------------------
  uint64_t committed_device_memory();  // 0 before init and after close
  // idempotent; see spec for kernel mode. Program mode: waits at most close_grace for the
  // runs in flight; a run still running then (a hung kernel without a watchdog) makes
  // close() abandon the context (pinned, never torn down) and record abandoned_report().
  // In a forked child (both modes): RuntimeError, no native call.
  void close();
  void set_close_grace(std::chrono::milliseconds grace);  // default 10 s
  // Non-empty once close() (or the destructor) abandoned a stuck context: what and why.
  std::string abandoned_report() const;
  std::chrono::milliseconds close_grace() const noexcept;
  // True while this Worker holds a native context that close() has not released
  // (READY, or CLOSED with a teardown still to retry).
  bool holds_native_context() const noexcept;

 private:
  std::shared_ptr<detail::WorkerCore> core_;
};

}  // namespace simpler
