// The process-wide shape of the simulated machine: defaults, environment, validation.
#pragma once

#include "simpler/sim/sim_driver.h"

namespace simpler::sim {

inline constexpr int32_t kDefaultDeviceCount = 4;
inline constexpr int32_t kDefaultClusters = 8;
inline constexpr int32_t kDefaultAicpuThreads = 4;
inline constexpr uint64_t kDefaultDeviceMemory = uint64_t{1} << 30;

inline constexpr int32_t kMaxDeviceCount = 64;
inline constexpr int32_t kMaxClusters = 64;
inline constexpr int32_t kMaxAicpuThreads = 64;
inline constexpr uint64_t kMinDeviceMemory = uint64_t{1} << 16;
inline constexpr uint64_t kMaxDeviceMemory = uint64_t{1} << 40;

SimConfig default_config();

// Defaults overridden by SIMPLER_SIM_DEVICES, SIMPLER_SIM_DEVICE_MEMORY (bytes, optional
// K/M/G suffix = KiB/MiB/GiB), SIMPLER_SIM_CLUSTERS, SIMPLER_SIM_AICPU_THREADS. A value
// that does not parse or is out of range is reported on stderr and the default is kept,
// because there is no caller to return an error to at first use.
SimConfig config_from_environment();

// Every field inside its documented range (the kMin*/kMax* limits above).
bool config_is_valid(const SimConfig& config);

}  // namespace simpler::sim
