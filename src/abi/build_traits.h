// simpler runtime host — what differs between the runtime builds (internal).
#pragma once

namespace simpler::rt::host {

struct BuildTraits {
  const char* name;            // answered by simpler_runtime_name
  bool kernel_mode_supported;  // kernel_mode_supported answers it; init refuses when false
  bool build_graph_first;      // EngineOptions::build_graph_first (host_build_graph)
};

}  // namespace simpler::rt::host
