// orch_ring_deadlock [IN x, SCALAR n]: one scope holding n tasks with runtime-allocated
// outputs (each checked: 1024-aligned DEVICE tensor of x's shape, else fatal); with a
// task window (or heap ring) smaller than that it can never fit.
// Children: 0 add_scalar.
#include "orch_util.h"

using simpler::orch::Scope;
using simpler::orch::Task;

extern "C" int orch_ring_deadlock(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& x = args->tensors[0];
  const int64_t n = static_cast<int64_t>(args->scalars[0]);
  Scope scope(api);
  TEST_ORCH_TRY(scope.status());
  for (int64_t i = 0; i < n; ++i) {
    SimplerTaskResult r;
    TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV)
                      .in(x)
                      .out_alloc({x.shapes[0]}, CHIP_DT_FLOAT32)
                      .scalar_f32(1.0f)
                      .submit(&r));
    const ChipTensor& out = r.outputs[0];
    if (r.output_count != 1 || out.space != CHIP_SPACE_DEVICE || out.buffer.addr % 1024 != 0 ||
        out.ndims != 1 || out.shapes[0] != x.shapes[0] ||
        out.buffer.size != 4 * static_cast<uint64_t>(x.shapes[0])) {
      return api->fatal(api->rt,
                        "orch_ring_deadlock: the OUT_ALLOC output is not a 1024-aligned DEVICE "
                        "tensor of x's shape");
    }
  }
  return 0;
}
