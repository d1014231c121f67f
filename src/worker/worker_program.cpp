// simpler::Worker, program mode: the runtime owns the device.
#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <vector>

#include "process_guards.h"
#include "simpler/log/log.h"
#include "worker_core.h"

namespace simpler {

using detail::RunRecord;
using detail::WorkerCore;

namespace {

// How long one hold of the worker lock may wait for the earlier runs a run must follow.
constexpr std::chrono::microseconds kHazardSlice{20'000};

void require_program_mode(const WorkerCore& c, const char* api) {
  if (c.mode != ExecutionMode::PROGRAM) {
    throw std::runtime_error(std::string("Worker.") + api + ": requires execution_mode='program'");
  }
}

void require_ready(const WorkerCore& c, const char* api) {
  const WorkerState state = c.state.load();
  if (state != WorkerState::READY) detail::refuse_not_ready(state, api);
  c.refuse_if_forked(api);  // the fork fence: no native call on an inherited context
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The allocation of this Worker that holds [ptr, ptr+size), or throws naming `api`.
void require_inside_allocation(const WorkerCore& c, uint64_t ptr, size_t size, const char* api) {
  auto it = c.allocations.upper_bound(ptr);
  if (it != c.allocations.begin()) {
    --it;
    const uint64_t base = it->first, bytes = it->second;
    if (ptr >= base && size <= bytes && ptr - base <= bytes - size) return;
    if (ptr >= base && ptr < base + bytes) {
      throw std::invalid_argument(std::string("Worker.") + api + ": " + std::to_string(size) +
                                  " bytes at " + hex(ptr) + " run past the end of the " +
                                  std::to_string(bytes) + "-byte allocation at " + hex(base));
    }
  }
  throw std::invalid_argument(std::string("Worker.") + api + ": " + hex(ptr) +
                              " is not inside device memory returned by this Worker's malloc");
}

std::vector<std::pair<uint64_t, uint64_t>> host_ranges_of(const ChipStorageTaskArgs& args) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (uint32_t i = 0; i < args.tensor_count && i < CHIP_MAX_TENSOR_ARGS; ++i) {
    const ChipTensor& t = args.tensors[i];
    if (t.space == CHIP_SPACE_HOST) ranges.emplace_back(t.buffer.addr, t.buffer.size);
  }
  return ranges;
}

// Completes the finished runs whose RunHandle was dropped (the in-flight table holds
// their only reference): nothing else would release their staged copies before close(), so
// a submit loop that drops its handles ran the device out of memory. A poll that fails (a
// failed context) stops here: the submit reports it.
void complete_dropped_runs(WorkerCore& c) {
  if (c.in_flight.size() < c.complete_dropped_at) return;
  for (auto it = c.in_flight.begin(); it != c.in_flight.end();) {
    const std::shared_ptr<RunRecord> record = (it++)->second;  // complete_run erases it
    if (record.use_count() > 2) continue;  // the table, this copy: a live RunHandle adds one
    try {
      if (!c.chip->poll(record->run_id)) continue;
    } catch (...) {
      return;
    }
    c.complete_run(*record);
  }
  c.complete_dropped_at = std::max<size_t>(32, 2 * c.in_flight.size());
}

// The runs in flight of one registered callable (a copy: completing one erases it).
std::vector<std::shared_ptr<RunRecord>> runs_of_callable(const WorkerCore& c, uint64_t token) {
  std::vector<std::shared_ptr<RunRecord>> runs;
  for (const auto& [run_id, record] : c.in_flight) {
    if (record->callable_token == token) runs.push_back(record);
  }
  return runs;
}

}  // namespace

void Worker::require_program_api(const char* api) const { require_program_mode(*core_, api); }

void detail::check_signature_types(const ChipStorageTaskArgs& args,
                                   const std::vector<ArgSpec>& specs, const char* api) {
  int64_t index = -1;
  if (std::string why = check_typed_args(args, specs, &index); !why.empty()) {
    throw SignatureMismatch(index, api_name(api) + ": " + why);
  }
}

void WorkerCore::complete_run(RunRecord& record) {
  if (record.finished.load()) return;
  // HOST outputs are copied back in submission order: a run waited before an earlier one
  // that wrote the same array must not have its result overwritten by the older one.
  std::vector<std::shared_ptr<RunRecord>> earlier;
  for (auto it = in_flight.begin(); it != in_flight.end() && it->first < record.run_id; ++it) {
    earlier.push_back(it->second);
  }
  for (const auto& run : earlier) {
    bool finished = false;
    try {
      finished = chip->poll(run->run_id);
    } catch (...) {  // its own handle reports it
    }
    if (finished) complete_run(*run);
  }
  in_flight.erase(record.run_id);
  try {
    chip->finalize_run(record.run_id);
  } catch (...) {
    record.error = std::current_exception();
  }
  record.finished.store(true, std::memory_order_release);
}

bool WorkerCore::drain_runs_within(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!in_flight.empty()) {
    std::shared_ptr<RunRecord> record = in_flight.begin()->second;
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!chip->wait(record->run_id, std::max(left, std::chrono::microseconds(0)))) return false;
    complete_run(*record);
  }
  return true;
}

void WorkerCore::abandon_stuck_context(const char* api) {
  // The claim goes back (C ABI 2.1): a new Worker may use the device at once, with its own
  // context; the stuck run keeps everything it may still touch.
  const bool released = chip->abandon_program_context();
  const std::string device = std::to_string(options.device_id);
  abandoned_report =
      std::string("Worker.") + api + ": a run on device " + device +
      " was still running after the " + std::to_string(close_grace_ms.load()) +
      " ms grace period (close_grace); its context is abandoned: never torn down, its threads "
      "and device memory held for the life of the process" +
      (released ? "; device " + device + " is released: a new Worker may use it"
                : "; the runtime build predates C ABI 2.1, so device " + device +
                      " stays claimed (use another device)") +
      " (a watchdog, CallConfig(watchdog_timeout_ms=...), times out such a run instead)";
  // Through the log sink (Python: logger "simpler"), so an embedding framework sees it.
  simpler_log(SIMPLER_LOG_LEVEL_WARNING, "worker", "%s", abandoned_report.c_str());
  // Their handles outlive the context: each ends with an error saying so (it will never
  // be observed to complete), instead of reaching for the context that is gone.
  for (auto& [run_id, record] : in_flight) {
    record->error = std::make_exception_ptr(ChipWorkerError(
        PTO_RUNTIME_ERR_TIMEOUT, std::string("Worker.") + api +
                                     " abandoned this run: it was still running after the " +
                                     std::to_string(close_grace_ms.load()) +
                                     " ms grace period (close_grace); its outputs are undefined"));
    record->finished.store(true, std::memory_order_release);
  }
  in_flight.clear();
  allocations.clear();
  buffers.clear();
  for (auto& [token, reg] : callables) reg.chip_handle.reset();
  pin_for_process_lifetime(std::move(chip));
}

void WorkerCore::drain_runs() {
  while (!in_flight.empty()) {
    std::shared_ptr<RunRecord> record = in_flight.begin()->second;
    complete_run(*record);  // finalize_run waits for the run
  }
}

CallableHandle Worker::register_callable(const ChipCallable& callable) {
  WorkerCore& c = *core_;
  require_program_mode(c, "register");
  std::lock_guard lock(c.program_mu);
  const WorkerState state = c.state.load();
  if (state == WorkerState::CLOSED || state == WorkerState::FAILED) {
    throw std::runtime_error(std::string("Worker.register: the worker is ") +
                             worker_state_name(state) +
                             "; register before or after init(), not after close()");
  }
  WorkerCore::Registered reg{std::make_shared<const ChipCallable>(callable), std::nullopt,
                             callable.arg_specs(), callable.signature()};
  if (state == WorkerState::READY) {
    reg.chip_handle = c.chip->register_callable(*reg.callable, "register");
  }
  const CallableHandle handle{c.next_callable_token++, c.handle_owner};
  c.callables.emplace(handle.token, std::move(reg));
  return handle;
}

static WorkerCore::Registered& find_registered(WorkerCore& c, CallableHandle handle,
                                               const char* api) {
  if (handle.owner != c.handle_owner) {
    throw std::invalid_argument(std::string("Worker.") + api +
                                ": the callable handle belongs to another Worker (a handle is "
                                "valid only on the Worker whose register() returned it)");
  }
  auto it = c.callables.find(handle.token);
  if (it == c.callables.end()) {
    throw std::invalid_argument(
        std::string("Worker.") + api +
        ": unknown callable handle (not returned by this Worker's register(), "
        "or already unregistered)");
  }
  return it->second;
}

std::vector<ArgSpec> Worker::registered_arg_specs(CallableHandle handle, const char* api) {
  WorkerCore& c = *core_;
  require_program_mode(c, api);
  std::lock_guard lock(c.program_mu);
  // Packing is for a run: the Worker's state comes first (a closed Worker has forgotten
  // its handles; a NEW one would refuse the run anyway), then the handle, then the args.
  require_ready(c, api);
  return find_registered(c, handle, api).specs;
}

void Worker::unregister_callable(CallableHandle handle) {
  WorkerCore& c = *core_;
  require_program_mode(c, "unregister");
  std::lock_guard lock(c.program_mu);
  const WorkerState state = c.state.load();
  if (state == WorkerState::CLOSED || state == WorkerState::FAILED) {
    throw std::runtime_error(std::string("Worker.unregister: the worker is ") +
                             worker_state_name(state));
  }
  auto& reg = find_registered(c, handle, "unregister");
  // Its finished runs are completed here: a run whose RunHandle was dropped is never
  // waited for, and the runtime refuses to unload a callable a run has not released.
  for (const auto& record : runs_of_callable(c, handle.token)) {
    if (!c.chip->poll(record->run_id)) {
      throw std::runtime_error(
          "Worker.unregister: a submitted run of this callable is still running; wait for its "
          "RunHandle before unregistering it");
    }
    c.complete_run(*record);
  }
  if (reg.chip_handle) c.chip->unregister_callable(*reg.chip_handle, "unregister");
  c.callables.erase(handle.token);
}

std::vector<ArgDirection> Worker::callable_signature(CallableHandle handle, const char* api) {
  WorkerCore& c = *core_;
  require_program_mode(c, api);
  std::lock_guard lock(c.program_mu);
  return find_registered(c, handle, api).callable->signature();
}

void Worker::run(CallableHandle handle, const ChipStorageTaskArgs& args,
                 const std::optional<CallConfig>& config) {
  WorkerCore& c = *core_;
  require_program_mode(c, "run");
  if (config) config->validate();
  std::unique_lock lock(c.program_mu);
  for (;;) {  // checked again after each slice: another thread may have closed the worker
    require_ready(c, "run");
    auto& reg = find_registered(c, handle, "run");
    detail::check_signature_types(args, reg.specs, "run");
    detail::HostRanges touched, written;
    detail::host_extents(args, reg.directions, touched, written);
    if (c.settle_host_hazards(touched, kHazardSlice)) {
      c.chip->run(*reg.chip_handle, args, config);
      return;
    }
    lock.unlock();  // between slices, so other threads keep going
    lock.lock();
  }
}

RunHandle Worker::submit(CallableHandle handle, const ChipStorageTaskArgs& args,
                         const std::optional<CallConfig>& config, const char* api) {
  for (;;) {  // the lock is released between slices, so other threads keep going
    if (auto run = submit_within(handle, args, config, kHazardSlice, api)) return std::move(*run);
  }
}

std::optional<RunHandle> Worker::submit_within(CallableHandle handle,
                                               const ChipStorageTaskArgs& args,
                                               const std::optional<CallConfig>& config,
                                               std::chrono::microseconds slice, const char* api) {
  WorkerCore& c = *core_;
  require_program_mode(c, api);
  if (config) config->validate();
  std::lock_guard lock(c.program_mu);
  require_ready(c, api);
  auto& reg = find_registered(c, handle, api);
  detail::check_signature_types(args, reg.specs, api);
  detail::HostRanges touched, written;
  detail::host_extents(args, reg.directions, touched, written);
  if (!c.settle_host_hazards(touched, slice)) return std::nullopt;
  complete_dropped_runs(c);
  auto record = std::make_shared<RunRecord>();
  record->callable_token = handle.token;
  record->host_ranges = host_ranges_of(args);
  record->host_writes = std::move(written);
  record->run_id = c.chip->submit(*reg.chip_handle, args, config, api);
  c.in_flight.emplace(record->run_id, record);
  return RunHandle(core_, record);
}

uint64_t Worker::malloc(size_t size) {
  WorkerCore& c = *core_;
  require_program_mode(c, "malloc");
  if (size == 0) throw std::invalid_argument("Worker.malloc: size must be > 0");
  std::lock_guard lock(c.program_mu);
  require_ready(c, "malloc");
  const uint64_t ptr = c.chip->malloc(size, "malloc");
  c.allocations.emplace(ptr, size);
  return ptr;
}

void Worker::free(uint64_t device_ptr) {
  WorkerCore& c = *core_;
  require_program_mode(c, "free");
  std::lock_guard lock(c.program_mu);
  require_ready(c, "free");
  if (!c.allocations.contains(device_ptr)) {
    throw std::invalid_argument("Worker.free: " + hex(device_ptr) +
                                " was not returned by this Worker's malloc (or was already freed)");
  }
  c.chip->free(device_ptr, "free");
  c.allocations.erase(device_ptr);
}

void Worker::copy_to(uint64_t dst_device, const void* src_host, size_t size) {
  WorkerCore& c = *core_;
  require_program_mode(c, "copy_to");
  std::lock_guard lock(c.program_mu);
  require_ready(c, "copy_to");
  require_inside_allocation(c, dst_device, size, "copy_to");
  c.chip->copy_to(dst_device, src_host, size, "copy_to");
}

void Worker::copy_from(void* dst_host, uint64_t src_device, size_t size) {
  WorkerCore& c = *core_;
  require_program_mode(c, "copy_from");
  std::lock_guard lock(c.program_mu);
  require_ready(c, "copy_from");
  require_inside_allocation(c, src_device, size, "copy_from");
  c.chip->copy_from(dst_host, src_device, size, "copy_from");
}

std::shared_ptr<HostBuffer> Worker::create_buffer(size_t nbytes) {
  WorkerCore& c = *core_;
  require_program_mode(c, "create_buffer");
  std::lock_guard lock(c.program_mu);
  require_ready(c, "create_buffer");
  auto buffer = std::make_shared<HostBuffer>(nbytes);
  c.buffers.push_back(buffer);
  return buffer;
}

ChipTensor Worker::make_tensor_arg(uint64_t host_addr, size_t nbytes,
                                   std::span<const int64_t> shape, DataType dtype) {
  WorkerCore& c = *core_;
  require_program_mode(c, "make_tensor_arg");
  require_ready(c, "make_tensor_arg");
  if (host_addr == 0)
    throw std::invalid_argument("Worker.make_tensor_arg: host memory address is null");
  ChipTensor t = make_tensor(host_addr, shape, dtype, AddressSpace::HOST, nbytes);
  validate_tensor(t);  // the view must fit the memory it was given
  return t;
}

void Worker::release_buffer(const HostBuffer& buffer) {
  WorkerCore& c = *core_;
  require_program_mode(c, "release_buffer");
  std::lock_guard lock(c.program_mu);
  require_ready(c, "release_buffer");
  auto it = std::find_if(c.buffers.begin(), c.buffers.end(),
                         [&](const auto& b) { return b.get() == &buffer; });
  if (it == c.buffers.end()) {
    throw std::invalid_argument(
        "Worker.release_buffer: the buffer was not created by this Worker's create_buffer (or was "
        "already released)");
  }
  std::vector<std::shared_ptr<RunRecord>> users;
  for (auto& [run_id, record] : c.in_flight) {
    for (auto [addr, size] : record->host_ranges) {
      if (buffer.overlaps(addr, size)) {
        users.push_back(record);
        break;
      }
    }
  }
  for (auto& record : users) {
    if (c.chip->poll(record->run_id)) {
      c.complete_run(*record);
    } else {
      throw std::runtime_error(
          "Worker.release_buffer: a submitted run still uses this buffer; wait for its RunHandle "
          "before releasing it");
    }
  }
  c.buffers.erase(it);
}

DeviceMemoryInfo Worker::device_memory_info() {
  WorkerCore& c = *core_;
  require_program_mode(c, "device_memory_info");
  std::lock_guard lock(c.program_mu);
  require_ready(c, "device_memory_info");
  return c.chip->device_memory_info("device_memory_info");
}

}  // namespace simpler
