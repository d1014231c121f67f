// tensormap_and_ringbuffer: the graph is built on the chip by the orchestrator thread
// while the schedulers dispatch; kernel mode is supported.
#include "abi/build_traits.h"

namespace {
constexpr simpler::rt::host::BuildTraits kBuildTraits{
    .name = "tensormap_and_ringbuffer",
    .kernel_mode_supported = true,
    .build_graph_first = false,
};
}  // namespace

#include "abi/abi_entries.inc"
