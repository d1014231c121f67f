// orch_pipeline [INOUT x, INOUT y, SCALAR mode, SCALAR ms]: one task, for the cross-run
// ordering tests of pipelined runs (1-D float32 tensors of equal length):
//   mode 0: after ms, x[0] += 1            (writes x, slowly)
//   mode 1: after ms, y = x                (reads x slowly, writes y)
//   mode 2: after ms, x = y                (writes x)
// Children: 0 sleep [INOUT x, SCALAR ms], 1 slow_copy [IN src, OUT dst, SCALAR ms].
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_pipeline(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& x = args->tensors[0];
  const ChipTensor& y = args->tensors[1];
  const int64_t mode = static_cast<int64_t>(args->scalars[0]);
  const int64_t ms = static_cast<int64_t>(args->scalars[1]);
  SimplerTaskResult r;
  switch (mode) {
    case 0:
      return Task(api, 0, SIMPLER_CORE_AIV).inout(x).scalar(ms).submit(&r);
    case 1:
      return Task(api, 1, SIMPLER_CORE_AIV).in(x).out(y).scalar(ms).submit(&r);
    default:
      return Task(api, 1, SIMPLER_CORE_AIV).in(y).out(x).scalar(ms).submit(&r);
  }
}
