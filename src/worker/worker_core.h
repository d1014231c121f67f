// The shared state behind simpler::Worker (and the RunHandles it hands out).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api_name.h"
#include "simpler/worker/worker.h"

namespace simpler::detail {

using HostRanges = std::vector<std::pair<uint64_t, uint64_t>>;  // host bytes [lo, hi)

// One submitted program-mode run. Written under WorkerCore::program_mu; `finished` is
// published last (release), after which the record never changes again.
struct RunRecord {
  uint64_t run_id = 0;
  uint64_t callable_token = 0;  // the registered callable it runs (unregister checks it)
  std::vector<std::pair<uint64_t, uint64_t>> host_ranges;  // HOST tensors it stages: (addr, bytes)
  // The host bytes [lo, hi) its copy-back writes (HOST OUT/INOUT tensors): a later run that
  // reads or writes them follows this one (host_hazards.cpp).
  HostRanges host_writes;
  std::exception_ptr error;
  std::atomic<bool> finished{false};
};

// Appends the host byte ranges of the HOST tensors of `args` to `touched`, and those a run
// of a callable with `directions` writes back to `written` (empty views: neither).
void host_extents(const ChipStorageTaskArgs& args, const std::vector<ArgDirection>& directions,
                  HostRanges& touched, HostRanges& written);

// Throws SignatureMismatch ("Worker.<api>: argument i ...") unless `args` fit the typed
// entries of `specs`; called before anything is enqueued.
void check_signature_types(const ChipStorageTaskArgs& args, const std::vector<ArgSpec>& specs,
                           const char* api);

// Throws the runtime_error of a call that needs a READY Worker found in `state` (not READY):
// "<api>: requires an initialized (READY) worker (state: S); <what to do in S>".
[[noreturn]] void refuse_not_ready(WorkerState state, const char* api);

struct WorkerCore {
  WorkerOptions options;
  std::string lib_dir;  // options.lib_dir or $SIMPLER_LIB_DIR, absolute (resolved at construction)
  ExecutionMode mode = ExecutionMode::PROGRAM;
  std::atomic<WorkerState> state{WorkerState::NEW};
  std::atomic<int64_t> close_grace_ms{10'000};

  // init / close / probe are linearized by this lock (never held by prepare/launch).
  std::mutex lifecycle_mu;
  std::unique_ptr<ChipWorker> chip;
  bool teardown_pending = false;  // CLOSED, but the native teardown has not succeeded yet
  std::thread::id init_thread;
  uint64_t bound_fork_epoch = 0;
  pid_t bound_pid = 0;
  std::optional<bool> kernel_supported_cache;

  // ---- program mode (everything below guarded by program_mu) -----------------------
  mutable std::mutex program_mu;
  struct Registered {
    std::shared_ptr<const ChipCallable> callable;
    std::optional<CallableHandle> chip_handle;  // installed once READY
    std::vector<ArgSpec> specs;                 // its (possibly typed) signature
    std::vector<ArgDirection> directions;       // which HOST arguments its runs write back
  };
  uint64_t next_callable_token = 1;
  const uint64_t handle_owner = mint_callable_owner();  // stamps this Worker's handles
  std::map<uint64_t, Registered> callables;
  std::map<uint64_t, uint64_t> allocations;  // device ptr -> bytes (this Worker's malloc)
  std::vector<std::shared_ptr<HostBuffer>> buffers;
  // By run id, i.e. in submit order: close() completes them in that order, so HOST outputs
  // that several runs write hold the last run's values.
  std::map<uint64_t, std::shared_ptr<RunRecord>> in_flight;
  // submit looks for finished runs whose RunHandle was dropped once in_flight holds this
  // many (then twice what is left): amortized O(1) per submit.
  size_t complete_dropped_at = 32;

  // ---- kernel mode: one lock linearizes prepare/launch against the native finalize -----
  mutable std::mutex kernel_mu;
  std::vector<std::shared_ptr<const ChipCallable>> kernel_images;  // kept until teardown succeeds
  // Every id this Worker's prepare minted -> the signature of the image it was prepared
  // from (read once: the bindings pack borrowed arguments against it on every launch).
  // `typed`: the signature declares a dtype somewhere, so a launch checks the args against
  // it (one lookup per launch finds both).
  struct Minted {
    std::shared_ptr<const std::vector<ArgSpec>> specs;  // never null for a minted id
    bool typed = false;
  };
  // Runtimes mint small sequential ids (0, 1, ...), so those index a vector: a launch's
  // lookup is one bounds check and a load, not a hash and a bucket walk. Any other id an
  // unusual runtime returns goes to the map.
  class MintedIds {
   public:
    void add(int64_t id, Minted minted) {
      if (id >= 0 && id < kDense) {
        if (static_cast<size_t>(id) >= dense_.size()) dense_.resize(static_cast<size_t>(id) + 1);
        dense_[static_cast<size_t>(id)] = std::move(minted);
      } else {
        sparse_.insert_or_assign(id, std::move(minted));
      }
    }
    // nullptr unless this Worker's prepare returned `id`.
    const Minted* find(int64_t id) const {
      if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) {
        const Minted& m = dense_[static_cast<size_t>(id)];
        return m.specs ? &m : nullptr;
      }
      if (sparse_.empty()) return nullptr;
      const auto it = sparse_.find(id);
      return it == sparse_.end() ? nullptr : &it->second;
    }
    void clear() {
      dense_.clear();
      sparse_.clear();
    }

   private:
    static constexpr int64_t kDense = int64_t{1} << 16;
    std::vector<Minted> dense_;  // index == id; specs == nullptr: not minted
    std::unordered_map<int64_t, Minted> sparse_;
  };
  MintedIds minted_ids;

  // Both modes: a forked child must make no native call on the parent's context.
  void refuse_if_forked(const char* api) const;
  bool forked() const;
  // Program mode, program_mu held: waits up to `grace` for every in-flight run and
  // completes the finished ones; false when a run is still running at the deadline.
  bool drain_runs_within(std::chrono::milliseconds grace);
  // Program mode: gives up a context whose run never finished (close/destructor past the
  // grace period): the ChipWorker is pinned for the life of the process, never finalized.
  void abandon_stuck_context(const char* api);
  std::string abandoned_report;  // set by abandon_stuck_context (lifecycle_mu)
  // Program mode, program_mu held: completes a finished run (copy-back, release) once.
  void complete_run(RunRecord& record);
  // Program mode, program_mu held: waits for and completes every in-flight run.
  void drain_runs();
  // Program mode, program_mu held: completes, in submission order, every in-flight run
  // whose HOST outputs overlap `touched` (host byte ranges a new run reads or writes), so
  // the new run sees their results and its own copy-back lands after theirs. False when
  // `slice` expired first (the caller releases the lock and calls again). A run that failed
  // keeps its error on its own handle: the new run sees the memory as it left it.
  bool settle_host_hazards(const HostRanges& touched, std::chrono::microseconds slice);
  // program_mu held: ends an in-flight run with `error` (it will not be completed).
  void fail_run(RunRecord& record, std::exception_ptr error);
};

}  // namespace simpler::detail
