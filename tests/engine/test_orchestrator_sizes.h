// Sizes for an Orchestrator that a test drives directly, without an Engine.
#pragma once

#include <cstdint>

#include "engine/orchestrator.h"
#include "engine_test_support.h"

namespace simpler::rt::testing {

// Small pools; the orchestrator's heap is `heap`.
inline OrchestratorSizes small_orchestrator_sizes(DeviceBuffer& heap) {
  OrchestratorSizes sizes;
  sizes.device = kDevice;
  sizes.heap_base = static_cast<uint8_t*>(heap.data());
  sizes.heap_bytes = heap.size();
  sizes.arena_bytes = 1 << 16;
  sizes.dep_pool_size = 1024;
  sizes.tensormap_capacity = 1024;
  return sizes;
}

}  // namespace simpler::rt::testing
