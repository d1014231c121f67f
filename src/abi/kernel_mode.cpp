#include "abi/kernel_mode.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "abi/abi_error.h"
#include "abi/arg_check.h"
#include "abi/driver.h"
#include "simpler/abi/status.h"

namespace simpler::rt::host {

size_t KernelLimits::arena_bytes_from_environment() {
  const char* text = std::getenv("SIMPLER_KERNEL_CODE_ARENA_BYTES");
  if (text == nullptr || *text == '\0') return kDefaultArenaBytes;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  // An overflowing number (ERANGE) is an invalid value, not a request for all memory.
  if (*end != '\0' || text[0] == '-' || errno == ERANGE || value < kMinArenaBytes ||
      value > kMaxArenaBytes) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         std::string("SIMPLER_KERNEL_CODE_ARENA_BYTES='") + text + "' is not a byte count in [" +
             std::to_string(kMinArenaBytes) + ", " + std::to_string(kMaxArenaBytes) +
             "] (the arena is device memory)");
  }
  return static_cast<size_t>(value);
}

KernelMode::KernelMode(const BuildTraits& traits, int32_t device, uint64_t generation,
                       DeviceClaim claim)
    : traits_(traits), device_(device), generation_(generation), claim_(std::move(claim)) {}

KernelMode::~KernelMode() = default;

void KernelMode::commit(const SimplerCallConfig& config, size_t arena_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    epoch_ = DeviceEpoch::of(device_);
    arena_.commit(KernelLimits::kArenaBlockBytes, arena_bytes);
    EngineOptions options;
    options.device = device_;
    options.config = config;
    options.build_graph_first = traits_.build_graph_first;
    options.number_diagnostics = true;  // every launch is a run: keep each one's files
    std::string error;
    int status = Engine::create(options, &engine_, &error);
    if (status != SIMPLER_OK) fail(status, "creating the kernel-mode engine failed: " + error);
    if (!engine_)
      fail(PTO_RUNTIME_ERR_INTERNAL, "Engine::create reported success without an engine");
    phase_ = Phase::Open;
  } catch (const AbiError& e) {
    // Roll back what we took; anything that cannot be released waits for finalize_device.
    phase_ = Phase::Closing;
    (void)release_all();
    // A refusal after the claim must never look like a structural error: the caller
    // skips finalize_device after INVALID_ARGUMENT / UNSUPPORTED.
    const bool structural =
        e.status() == PTO_RUNTIME_ERR_INVALID_ARGUMENT || e.status() == PTO_RUNTIME_ERR_UNSUPPORTED;
    if (structural && holds_resources_locked()) fail(PTO_RUNTIME_ERR_INTERNAL, e.what());
    throw;
  }
}

const char* KernelMode::phase_refusal() const {
  switch (phase_) {
    case Phase::Committing:
      return "the kernel-mode init of this context did not complete";
    case Phase::Open:
      if (epoch_.reset_since()) {
        return "the device was reset (sim_device_reset) while this context used it: its code "
               "arena and rings are gone; close the Worker " SIMPLER_HOW_TO_CLOSE
               " and create a new one";
      }
      return nullptr;
    case Phase::Poisoned:
      return "the context is poisoned: an earlier prepare could not load its orchestration; "
             "close the Worker " SIMPLER_HOW_TO_CLOSE " and create a new one";
    case Phase::Closing:
      return "finalize_device has started on this context (retry finalize_device)";
    case Phase::Closed:
      return "the context was finalized; create a new context";
  }
  return "unknown phase";
}

int64_t KernelMode::prepare(const void* image, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const char* why = phase_refusal()) fail(PTO_RUNTIME_ERR_INVALID_STATE, why);
  (void)parse_callable(image, size);  // full walk of the caller's bytes first
  if (static_cast<int64_t>(callables_.size()) >= KernelLimits::kMaxCallables) {
    fail(PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED, "the context already holds " +
                                                      std::to_string(KernelLimits::kMaxCallables) +
                                                      " callables, the kernel-mode limit");
  }
  // Byte-identical images get their own id and upload but share one loaded program.
  const size_t hash =
      std::hash<std::string_view>{}(std::string_view(static_cast<const char*>(image), size));
  const ResidentCallable* same_image = nullptr;
  const auto [first, last] = ids_by_hash_.equal_range(hash);
  for (auto it = first; it != last && same_image == nullptr; ++it) {
    const ResidentCallable& other = callables_[it->second];
    if (other.size == size && std::memcmp(other.bytes, image, size) == 0) same_image = &other;
  }
  // The check cache's slot first: checked_args_ never lags callables_.
  checked_args_.reserve(callables_.size() + 1);
  auto checked = std::make_unique<CheckedArgs>();
  const CodeArena::Mark mark = arena_.mark();
  // A full arena grows by a device allocation on this context's device, made current for
  // it only then: the driver cannot restore "no device" to a thread that had none.
  std::optional<ScopedDevice> on_device;
  if (!arena_.fits(size)) on_device.emplace(device_);
  const uint8_t* uploaded = arena_.upload(image, size);
  try {
    callables_.push_back(make_resident(uploaded, size, same_image));
    checked_args_.push_back(std::move(checked));  // reserved: cannot throw
  } catch (const AbiError&) {
    arena_.rollback(mark);
    phase_ = Phase::Poisoned;
    throw;
  }
  ids_by_hash_.emplace(hash, callables_.size() - 1);
  return static_cast<int64_t>(callables_.size() - 1);
}

void KernelMode::launch(int64_t callable_id, const ChipStorageTaskArgs& args, sim_stream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Read before any check, so a free or reset after it is seen by the next launch.
  uint64_t generation = 0;
  const bool have_generation = sim_device_memory_generation(device_, &generation) == SIMPLER_OK;
  if (phase_ != Phase::Open || !have_generation || !open_checked_ ||
      generation != open_at_generation_) {
    open_checked_ = false;
    if (const char* why = phase_refusal()) fail(PTO_RUNTIME_ERR_INVALID_STATE, why);
    open_checked_ = have_generation;
    open_at_generation_ = generation;
  }
  if (callable_id >= static_cast<int64_t>(callables_.size())) {
    fail(PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT,
         "callable id " + std::to_string(callable_id) + " is not resident in this context (" +
             std::to_string(callables_.size()) + " prepared)");
  }
  check_stream(stream);
  const auto index = static_cast<size_t>(callable_id);
  const ResidentCallable& callable = callables_[index];
  CheckedArgs& checked = *checked_args_[index];
  if (!have_generation || !checked.matches(args, generation)) {
    check_call_args(args, callable.signature, device_, /*allow_host=*/false, callable.typed);
    if (have_generation) checked.remember(args, generation);
  }
  if (engine_) {
    std::string why;
    const int sticky = engine_->sticky_error(&why);
    if (sticky != SIMPLER_OK) {
      fail(sticky, "the context failed earlier (" + why + "); only close() is allowed now");
    }
  }

  LaunchRecord* record = pool_.acquire();
  record->owner = this;
  record->program = callable.program.get();
  record->callable_id = callable_id;
  try {
    record->store_args(args);
  } catch (const std::bad_alloc&) {
    pool_.release(record);  // the C ABI boundary reports the bad_alloc
    throw;
  }

  ++launched_;
  const int status =
      sim_launch_device_job(stream, &KernelMode::run_launch, record, &KernelMode::finish_launch);
  if (status != SIMPLER_OK) {
    --launched_;
    pool_.release(record);
    if (status == SIM_ERR_INVALID_HANDLE) {
      checked_stream_ = nullptr;  // destroyed since it was checked
      refuse_stream(status);
    }
    check_driver(status, "enqueueing the launch on the caller's stream");
  }
}

void KernelMode::check_stream(sim_stream_t stream) {
  if (stream == checked_stream_) return;
  int32_t stream_device = -1;
  const int status = sim_stream_device(stream, &stream_device);
  if (status != SIMPLER_OK) refuse_stream(status);
  if (stream_device != device_) {
    fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
         "stream: it belongs to device " + std::to_string(stream_device) +
             ", the kernel context uses device " + std::to_string(device_));
  }
  checked_stream_ = stream;
}

void KernelMode::refuse_stream(int status) {
  fail(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
       std::string("stream: not a live sim stream (") + simpler_status_name(status) + ")");
}

int KernelMode::run_launch(void* p) {
  auto* record = static_cast<LaunchRecord*>(p);
  KernelMode& self = *record->owner;
  std::string error;
  // Launches on several streams may overlap; Engine::execute serializes them.
  // Per executor thread, so overlapping launches on several streams never share it; a
  // thread's scratch stays cache-hot however many records are in flight.
  thread_local ChipStorageTaskArgs scratch;
  // launch() checked these args (check_call_args) before it copied them into the record.
  const int status =
      self.engine_->execute_checked(*record->program, record->expanded_args(scratch), &error);
  if (status != SIMPLER_OK) {
    // The engine's message names the kernel and the task; the status name ends it once.
    self.launch_error_.set("kernel launch of callable " + std::to_string(record->callable_id) +
                           (error.empty() ? " failed" : ": " + error) + " [" +
                           simpler_status_name(status) + "]");
  }
  return status;
}

void KernelMode::finish_launch(void* p) {
  auto* record = static_cast<LaunchRecord*>(p);
  KernelMode& self = *record->owner;
  self.pool_.release(record);
  // Last touch of the context: once the count reaches 0 finalize may free everything.
  self.finished_.fetch_add(1, std::memory_order_release);
}

uint64_t KernelMode::committed_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t bytes = arena_.capacity();
  if (engine_) bytes += engine_->committed_bytes();
  return bytes;
}

bool KernelMode::holds_resources() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return holds_resources_locked();
}

bool KernelMode::holds_resources_locked() const {
  return claim_.held() || arena_.committed() || engine_ != nullptr || !callables_.empty();
}

int KernelMode::release_all() {
  if (engine_ && engine_->abandoned()) {
    // A thread of the engine may still run code of any of these programs: they stay
    // loaded for the life of the process.
    for (ResidentCallable& c : callables_) {
      (void)new std::shared_ptr<const LoadedProgram>(c.program);  // NOLINT: leaked on purpose
    }
  }
  callables_.clear();  // host side: unloads the programs that point into the arena
  checked_args_.clear();
  ids_by_hash_.clear();
  int status = arena_.release();
  if (status != SIMPLER_OK) return status;
  if (engine_) {
    std::string error;
    status = engine_->release(&error);
    if (status != SIMPLER_OK) return status;  // the engine keeps what it could not free
    engine_.reset();
  }
  claim_.release();
  phase_ = Phase::Closed;
  return SIMPLER_OK;
}

int KernelMode::finalize() {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t unfinished = launched_ - finished_.load(std::memory_order_acquire);
  if (unfinished != 0) {
    fail(PTO_RUNTIME_ERR_INVALID_STATE, "busy: " + std::to_string(unfinished) +
                                            " launch(es) of this context have not finished; "
                                            "synchronize the stream, then finalize again");
  }
  if (phase_ == Phase::Closed) return SIMPLER_OK;
  phase_ = Phase::Closing;
  int status = release_all();
  if (status != SIMPLER_OK) {
    fail(status,
         std::string("a release failed: ") + simpler_status_name(status) +
             "; what is left (and the device claim) is kept: close again " SIMPLER_HOW_TO_CLOSE);
  }
  return status;
}

}  // namespace simpler::rt::host
