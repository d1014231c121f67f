// CallConfig validation and conversion to/from the ABI struct.
#include <cstdio>
#include <cstring>
#include <string>

#include "simpler/task/task_interface.h"

namespace simpler {
namespace {

// Upper bounds: what a device and a host can hold, so a typo (2**40) is refused by
// validate() instead of taking the host's memory and minutes at init. A task-window slot
// costs about 1.2 KB of host memory (slot, argument arena, ready queues), an edge 16 bytes,
// a tensor-map entry about 100 bytes; the simulated device holds at most 1 TiB.
constexpr uint64_t kMaxTaskWindow = uint64_t{1} << 20;         // ~1.2 GB of host memory
constexpr uint64_t kMaxHeapRingBytes = uint64_t{1} << 40;      // the largest device
constexpr uint64_t kMaxDepPoolSize = uint64_t{1} << 26;        // 1 GiB of edges
constexpr uint64_t kMaxTensorMapCapacity = uint64_t{1} << 24;  // ~1.6 GB of entries
constexpr uint64_t kMaxWatchdogMs = uint64_t{1} << 40;         // ~35 years: "no timeout" in effect

std::string too_large(const char* field, uint64_t value, uint64_t limit, const char* why) {
  return std::string(field) + ": " + std::to_string(value) + " is larger than the limit " +
         std::to_string(limit) + " (" + why + ")";
}

// Range rules shared by the C++ and the ABI checks. Each returns "" or the reason.
std::string check_numeric_fields(int32_t aicpu_thread_num, uint64_t task_window_size,
                                 uint64_t heap_ring_bytes, uint64_t dep_pool_size,
                                 uint64_t tensormap_capacity, uint64_t watchdog_timeout_ms,
                                 uint32_t pipeline_depth) {
  if (pipeline_depth > SIMPLER_MAX_PIPELINE_DEPTH) {
    return "pipeline_depth: " + std::to_string(pipeline_depth) + " is larger than the limit " +
           std::to_string(SIMPLER_MAX_PIPELINE_DEPTH) +
           " (0 or 1: no pipelining; 2..limit: runs in flight at once)";
  }
  if (aicpu_thread_num != 0 && (aicpu_thread_num < 2 || aicpu_thread_num > 16)) {
    return "aicpu_thread_num: " + std::to_string(aicpu_thread_num) +
           " is not allowed (0 for the default, or 2..16: 1 orchestrator + schedulers)";
  }
  if (task_window_size != 0 &&
      (task_window_size < 4 || (task_window_size & (task_window_size - 1)) != 0)) {
    return "task_window_size: " + std::to_string(task_window_size) +
           " is not allowed (0 for the default, or a power of two >= 4)";
  }
  if (task_window_size > kMaxTaskWindow) {
    return too_large("task_window_size", task_window_size, kMaxTaskWindow,
                     "each task slot takes about 1.2 KB of host memory");
  }
  if (heap_ring_bytes > kMaxHeapRingBytes) {
    return too_large("heap_ring_bytes", heap_ring_bytes, kMaxHeapRingBytes,
                     "the heap ring is device memory; a device holds at most 1 TiB");
  }
  if (dep_pool_size > kMaxDepPoolSize) {
    return too_large("dep_pool_size", dep_pool_size, kMaxDepPoolSize,
                     "each edge takes 16 bytes of host memory");
  }
  if (tensormap_capacity > kMaxTensorMapCapacity) {
    return too_large("tensormap_capacity", tensormap_capacity, kMaxTensorMapCapacity,
                     "each entry takes about 100 bytes of host memory");
  }
  if (watchdog_timeout_ms > kMaxWatchdogMs) {
    return too_large("watchdog_timeout_ms", watchdog_timeout_ms, kMaxWatchdogMs, "about 35 years");
  }
  if (heap_ring_bytes != 0 && heap_ring_bytes < 4096) {
    return "heap_ring_bytes: " + std::to_string(heap_ring_bytes) +
           " is not allowed (0 for the default, or >= 4096)";
  }
  if (dep_pool_size != 0 && dep_pool_size < 16) {
    return "dep_pool_size: " + std::to_string(dep_pool_size) +
           " is not allowed (0 for the default, or >= 16)";
  }
  if (tensormap_capacity != 0 && tensormap_capacity < 16) {
    return "tensormap_capacity: " + std::to_string(tensormap_capacity) +
           " is not allowed (0 for the default, or >= 16)";
  }
  return {};
}

std::string check_prefix(std::string_view prefix, bool any_switch_on) {
  if (prefix.size() >= SIMPLER_OUTPUT_PREFIX_MAX) {
    return "output_prefix: " + std::to_string(prefix.size()) + " bytes is too long (at most " +
           std::to_string(SIMPLER_OUTPUT_PREFIX_MAX - 1) + ")";
  }
  if (prefix.find('\0') != std::string_view::npos) {
    return "output_prefix: contains a NUL byte";
  }
  if (any_switch_on && prefix.empty()) {
    return "output_prefix: required (non-empty) when a diagnostics switch (enable_swimlane, "
           "dump_args, dump_dep_graph, enable_profiling) is on";
  }
  return {};
}

uint32_t flags_of(const CallConfig& c) {
  return (c.enable_swimlane ? SIMPLER_CFG_SWIMLANE : 0u) |
         (c.dump_args ? SIMPLER_CFG_DUMP_ARGS : 0u) |
         (c.dump_dep_graph ? SIMPLER_CFG_DEP_GRAPH : 0u) |
         (c.enable_profiling ? SIMPLER_CFG_PROFILING : 0u);
}

}  // namespace

void CallConfig::validate() const {
  std::string error = check_prefix(output_prefix, flags_of(*this) != 0);
  if (error.empty()) {
    error = check_numeric_fields(aicpu_thread_num, task_window_size, heap_ring_bytes, dep_pool_size,
                                 tensormap_capacity, watchdog_timeout_ms, pipeline_depth);
  }
  if (!error.empty()) throw TaskInterfaceError(error);
}

SimplerCallConfig CallConfig::to_abi() const {
  validate();
  SimplerCallConfig c{};
  c.struct_size = sizeof(SimplerCallConfig);
  c.flags = flags_of(*this);
  std::memcpy(c.output_prefix, output_prefix.data(), output_prefix.size());  // NUL from {}
  c.aicpu_thread_num = aicpu_thread_num;
  c.task_window_size = task_window_size;
  c.heap_ring_bytes = heap_ring_bytes;
  c.dep_pool_size = dep_pool_size;
  c.tensormap_capacity = tensormap_capacity;
  c.watchdog_timeout_ms = watchdog_timeout_ms;
  c.pipeline_depth = pipeline_depth;
  return c;
}

CallConfig CallConfig::from_abi(const SimplerCallConfig& c) {
  if (std::string error = validate_call_config(c); !error.empty()) {
    throw TaskInterfaceError(error);
  }
  CallConfig out;
  out.enable_swimlane = (c.flags & SIMPLER_CFG_SWIMLANE) != 0;
  out.dump_args = (c.flags & SIMPLER_CFG_DUMP_ARGS) != 0;
  out.dump_dep_graph = (c.flags & SIMPLER_CFG_DEP_GRAPH) != 0;
  out.enable_profiling = (c.flags & SIMPLER_CFG_PROFILING) != 0;
  out.output_prefix = c.output_prefix;  // NUL-terminated: checked above
  out.aicpu_thread_num = c.aicpu_thread_num;
  out.task_window_size = c.task_window_size;
  out.heap_ring_bytes = c.heap_ring_bytes;
  out.dep_pool_size = c.dep_pool_size;
  out.tensormap_capacity = c.tensormap_capacity;
  out.watchdog_timeout_ms = c.watchdog_timeout_ms;
  out.pipeline_depth = c.pipeline_depth;
  return out;
}

std::string validate_call_config(const SimplerCallConfig& c) {
  if (c.struct_size != sizeof(SimplerCallConfig)) {
    return "struct_size: " + std::to_string(c.struct_size) + " does not match " +
           std::to_string(sizeof(SimplerCallConfig)) + " (set it to sizeof(SimplerCallConfig))";
  }
  if ((c.flags & ~SIMPLER_CFG_ALL_FLAGS) != 0) {
    char bits[32];
    std::snprintf(bits, sizeof bits, "0x%X", c.flags & ~SIMPLER_CFG_ALL_FLAGS);
    return std::string("flags: unknown bits ") + bits +
           " set (allowed: SIMPLER_CFG_* bits, mask 0xF)";
  }
  const size_t len = strnlen(c.output_prefix, SIMPLER_OUTPUT_PREFIX_MAX);
  if (len == SIMPLER_OUTPUT_PREFIX_MAX) {
    return "output_prefix: not NUL-terminated within " + std::to_string(SIMPLER_OUTPUT_PREFIX_MAX) +
           " bytes";
  }
  std::string error = check_prefix(std::string_view(c.output_prefix, len), c.flags != 0);
  if (error.empty()) {
    error = check_numeric_fields(c.aicpu_thread_num, c.task_window_size, c.heap_ring_bytes,
                                 c.dep_pool_size, c.tensormap_capacity, c.watchdog_timeout_ms,
                                 c.pipeline_depth);
  }
  return error;
}

}  // namespace simpler
