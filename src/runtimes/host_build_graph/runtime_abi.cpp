// host_build_graph: the orchestration runs on the host and builds the whole graph first,
// then the chip executes it. No kernel mode: supported answers 0, init refuses with
// UNSUPPORTED, prepare/launch with INVALID_STATE (after the same argument checks).
#include "abi/build_traits.h"

namespace {
constexpr simpler::rt::host::BuildTraits kBuildTraits{
    .name = "host_build_graph",
    .kernel_mode_supported = false,
    .build_graph_first = true,
};
}  // namespace

#include "abi/abi_entries.inc"
