#include "sim_config.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "simpler/log/log.h"

namespace simpler::sim {
namespace {

// Parses a non-negative integer with an optional K/M/G (binary) suffix.
std::optional<uint64_t> parse_size(const char* text) {
  if (text == nullptr || *text == '\0' || *text == '-') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text) return std::nullopt;
  unsigned shift = 0;
  switch (*end) {
    case '\0':
      break;
    case 'k':
    case 'K':
      shift = 10;
      ++end;
      break;
    case 'm':
    case 'M':
      shift = 20;
      ++end;
      break;
    case 'g':
    case 'G':
      shift = 30;
      ++end;
      break;
    default:
      return std::nullopt;
  }
  if (*end != '\0') return std::nullopt;
  if (shift != 0 && value > (~0ull >> shift)) return std::nullopt;
  return static_cast<uint64_t>(value) << shift;
}

template <class T>
void override_from_env(const char* name, T* field, uint64_t min, uint64_t max) {
  const char* text = std::getenv(name);
  if (text == nullptr) return;
  const std::optional<uint64_t> value = parse_size(text);
  if (!value || *value < min || *value > max) {
    simpler_log(SIMPLER_LOG_LEVEL_WARNING, "sim",
                "ignoring %s=\"%s\": expected an integer in [%llu, %llu]; using the default %llu",
                name, text, static_cast<unsigned long long>(min),
                static_cast<unsigned long long>(max), static_cast<unsigned long long>(*field));
    return;
  }
  *field = static_cast<T>(*value);
}

}  // namespace

SimConfig default_config() {
  SimConfig config{};
  config.device_count = kDefaultDeviceCount;
  config.clusters_per_device = kDefaultClusters;
  config.aicpu_threads = kDefaultAicpuThreads;
  config.reserved = 0;
  config.device_memory_bytes = kDefaultDeviceMemory;
  return config;
}

SimConfig config_from_environment() {
  SimConfig config = default_config();
  override_from_env("SIMPLER_SIM_DEVICES", &config.device_count, 1, kMaxDeviceCount);
  override_from_env("SIMPLER_SIM_DEVICE_MEMORY", &config.device_memory_bytes, kMinDeviceMemory,
                    kMaxDeviceMemory);
  override_from_env("SIMPLER_SIM_CLUSTERS", &config.clusters_per_device, 1, kMaxClusters);
  override_from_env("SIMPLER_SIM_AICPU_THREADS", &config.aicpu_threads, 1, kMaxAicpuThreads);
  return config;
}

bool config_is_valid(const SimConfig& config) {
  return config.device_count >= 1 && config.device_count <= kMaxDeviceCount &&
         config.clusters_per_device >= 1 && config.clusters_per_device <= kMaxClusters &&
         config.aicpu_threads >= 1 && config.aicpu_threads <= kMaxAicpuThreads &&
         config.device_memory_bytes >= kMinDeviceMemory &&
         config.device_memory_bytes <= kMaxDeviceMemory;
}

}  // namespace simpler::sim
