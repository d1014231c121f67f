// simpler — ChipWorker: loads one runtime build and owns one device context of it.
//
// States: NEW -> INITIALIZED -> CLOSED, and FAILED after a failed init (rolled back:
// nothing leaked, no device held; a later init may be tried). A context is latched to one
// mode: program mode (init: the runtime owns the device) or kernel mode (kernel_init: the
// caller owns the device and the stream; spec/kernel-mode.md, "ChipWorker").
//
// Not internally synchronized: one thread at a time (simpler::Worker serializes callers).
// init/kernel_init and finalize must run on the same thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "simpler/abi/runtime_abi.h"
#include "simpler/task/task_interface.h"
#include "simpler/worker/errors.h"
#include "simpler/worker/runtime_build.h"

namespace simpler {

class RuntimeLibrary;  // the dlopen'ed build and its resolved entries (src/worker)

enum class ChipWorkerState { NEW, INITIALIZED, CLOSED, FAILED };
enum class ChipWorkerMode { NONE, PROGRAM, KERNEL };
const char* chip_worker_state_name(ChipWorkerState state);
const char* chip_worker_mode_name(ChipWorkerMode mode);

// Opaque handle of a callable registered in program mode (the runtime's id stays private).
// `owner` names the Worker/ChipWorker that minted it (process-unique): any other one
// refuses the handle instead of running its own callable that has the same token.
struct CallableHandle {
  uint64_t token = 0;
  uint64_t owner = 0;
  friend bool operator==(CallableHandle, CallableHandle) = default;
};
// A fresh process-unique owner id for the handles of one Worker or ChipWorker (never 0).
uint64_t mint_callable_owner() noexcept;

struct DeviceMemoryInfo {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

class ChipWorker {
 public:
  ChipWorker();
  // An INITIALIZED worker is finalized when destroyed on its init thread; otherwise (or
  // if that fails) the context is deliberately leaked with a warning on stderr rather
  // than torn down under a framework that may still use the device.
  ~ChipWorker();
  ChipWorker(const ChipWorker&) = delete;
  ChipWorker& operator=(const ChipWorker&) = delete;

  ChipWorkerState state() const noexcept { return state_; }
  ChipWorkerMode mode() const noexcept { return mode_; }
  int32_t device_id() const noexcept { return device_id_; }
  // A failed init could not release what it took: inits are refused (INVALID_STATE)
  // until finalize() succeeds.
  bool teardown_owed() const noexcept { return teardown_owed_; }

  // ---- program mode (the runtime owns the device) ----------------------------------
  void init(int32_t device_id, const RuntimeBins& bins,
            const std::optional<CallConfig>& prewarm_config = std::nullopt);
  // `caller_api` as for malloc: the API the user called, named on failure.
  CallableHandle register_callable(const ChipCallable& callable, const char* caller_api = nullptr);
  void unregister_callable(CallableHandle handle, const char* caller_api = nullptr);
  // The signature of a callable registered here (ChipWorkerError INVALID_ARGUMENT for a
  // foreign or unknown handle).
  std::vector<ArgDirection> callable_signature(CallableHandle handle) const;
  // Blocking run; a failed run throws ChipWorkerError with the run's status.
  void run(CallableHandle handle, const ChipStorageTaskArgs& args,
           const std::optional<CallConfig>& config = std::nullopt);
  // Asynchronous run: submit -> poll/wait -> finalize_run (exactly once per run).
  // `caller_api` (e.g. "run" for Worker.run) names the caller's API in a refusal's message, read
  // only on failure; nullptr: "ChipWorker.submit".
  uint64_t submit(CallableHandle handle, const ChipStorageTaskArgs& args,
                  const std::optional<CallConfig>& config = std::nullopt,
                  const char* caller_api = nullptr);
  bool poll(uint64_t run_id);
  // True when the run finished; false when `timeout` expired first (the run keeps going).
  // std::nullopt waits forever. Does not throw the run's own status.
  bool wait(uint64_t run_id, std::optional<std::chrono::microseconds> timeout);
  // Waits, copies HOST outputs back, frees the run; throws the run's error if it failed.
  void finalize_run(uint64_t run_id);

  // `caller_api` as for submit (e.g. "malloc" -> "Worker.malloc: ..."; read only on failure).
  uint64_t malloc(size_t size, const char* caller_api = nullptr);
  void free(uint64_t device_ptr, const char* caller_api = nullptr);
  void copy_to(uint64_t dst_device, const void* src_host, size_t size,
               const char* caller_api = nullptr);
  void copy_from(void* dst_host, uint64_t src_device, size_t size,
                 const char* caller_api = nullptr);
  DeviceMemoryInfo device_memory_info(const char* caller_api = nullptr);

  // ---- kernel mode (the caller owns the device and the stream) ---------------------
  // Loads the build, creates a context, asks `supported` (0 -> UnsupportedRuntimeOperation
  // without resolving the other kernel entries), mints a generation and inits on the
  // device current on the calling thread.
  void kernel_init(int32_t device_id, const RuntimeBins& bins, const CallConfig& config);
  // Returns the runtime-minted id. The image is kept until a finalize succeeds.
  int64_t kernel_prepare_callable(const ChipCallable& callable, const char* caller_api = nullptr);
  // caller_stream: the caller's sim_stream_t (null -> INVALID_ARGUMENT before the entry).
  // `api`: the API the caller used, heading an error message: a qualified name as is
  // ("KernelLaunch.launch: callable 3: ..."), a bare one as a Worker method
  // ("kernel_launch" -> "Worker.kernel_launch: ..."); null: "ChipWorker.kernel_launch(
  // callable_id=3) failed: ...". Read only when the launch fails.
  void kernel_launch(int64_t callable_id, const ChipStorageTaskArgs& args, void* caller_stream,
                     const char* api = nullptr);
  // Never throws; false when no context is bound.
  bool kernel_mode_supported() const noexcept;
  // The runtime's message for this context's most recent kernel-mode launch that failed on
  // the chip ("" if none, or if the build does not provide it). Launches fail
  // asynchronously, on the caller's stream; the stream reports only the status.
  std::string kernel_launch_error() const;
  // Nonzero, strictly increasing, process-unique; 0 before kernel_init.
  uint64_t generation() const noexcept { return generation_; }
  size_t prepared_image_count() const noexcept { return kernel_images_.size(); }

  // ---- both ------------------------------------------------------------------------
  // Bytes this context holds on the device (0 when no context is bound).
  uint64_t committed_device_memory();
  // Releases the context: idempotent; only on the thread that called init. A failed
  // teardown throws ChipWorkerError and keeps everything for a retry.
  void finalize();
  // Program mode only: finalize() from any thread. The runtime owns a program-mode device
  // (it makes the device current itself), so a Worker collected on another thread can
  // still release its memory and device claim. The calling thread's current device may
  // be left set to this context's device.
  void finalize_program_context_on_any_thread();
  // Program mode only, any thread: gives up on a context whose run is stuck (C ABI 2.1
  // abandon_context): nothing is torn down or waited for, the device claim is released so
  // a new context may use the device. Returns false when the build predates 2.1 (the
  // claim then stays held). The ChipWorker must then be pinned, never finalized.
  bool abandon_program_context() noexcept;

  // Loads the build (and the sim context when given), resolves `supported` before any
  // context exists, creates exactly one fresh context, asks, destroys it, unloads.
  static bool probe_kernel_mode_supported(const RuntimeBins& bins);

  // Highest generation minted so far in this process (0 if none).
  static uint64_t last_generation() noexcept;

 private:
  void require_initialized(ChipWorkerMode mode, const char* api) const;
  bool forked() const noexcept;  // bound in a process this one was forked from
  void refuse_if_forked(const char* api) const;
  void bind_library_and_context(const RuntimeBins& bins, bool resolve_program_entries);
  void roll_back_failed_init(int init_status);
  void release_context_and_library();
  int finalize_device_call() const;  // finalize_device / context_destroy through the table
  int destroy_context_call() const;
  void finalize_on_this_thread();
  std::string with_runtime_detail(const std::string& what) const;
  [[noreturn]] void throw_status(int status, const std::string& what_failed) const;
  int64_t runtime_callable_id(CallableHandle handle, const char* api) const;

  ChipWorkerState state_ = ChipWorkerState::NEW;
  ChipWorkerMode mode_ = ChipWorkerMode::NONE;
  int32_t device_id_ = -1;
  uint64_t generation_ = 0;
  bool teardown_owed_ = false;
  std::thread::id init_thread_;
  std::shared_ptr<RuntimeLibrary> library_;
  SimplerDeviceContext* ctx_ = nullptr;
  uint64_t bound_fork_epoch_ = 0;  // fork_epoch() and pid when ctx_ was bound
  int64_t bound_pid_ = 0;
  // program mode: handle token -> runtime callable id
  uint64_t next_handle_token_ = 1;
  const uint64_t handle_owner_ = mint_callable_owner();
  std::map<uint64_t, std::vector<ArgDirection>> signatures_;  // handle token -> signature
  std::unordered_map<uint64_t, int64_t> registered_;
  // kernel mode: every image handed to prepare, kept until a finalize succeeds
  std::vector<std::shared_ptr<const ChipCallable>> kernel_images_;
};

}  // namespace simpler
