// orch_nested_scopes [INOUT x, SCALAR outer, SCALAR inner]: for each outer iteration,
// in a scope: t = x + 1 (into an alloc_tensor), then `inner` nested scopes each doing
// t += 1 in place, then x = x + t. Per iteration x -> 2x + 1 + inner.
// Children: 0 add_scalar, 1 add_const, 2 vector_add.
#include "orch_util.h"

using simpler::orch::Scope;
using simpler::orch::Task;

extern "C" int orch_nested_scopes(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& x = args->tensors[0];
  const int64_t outer = static_cast<int64_t>(args->scalars[0]);
  const int64_t inner = static_cast<int64_t>(args->scalars[1]);
  SimplerTaskResult r;
  for (int64_t i = 0; i < outer; ++i) {
    Scope s1(api);
    TEST_ORCH_TRY(s1.status());
    ChipTensor t;
    TEST_ORCH_TRY(api->alloc_tensor(api->rt, x.ndims, x.shapes, x.dtype, &t));
    TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).in(x).out(t).scalar_f32(1.0f).submit(&r));
    for (int64_t j = 0; j < inner; ++j) {
      Scope s2(api);
      TEST_ORCH_TRY(s2.status());
      TEST_ORCH_TRY(Task(api, 1, SIMPLER_CORE_AIV).inout(t).scalar_f32(1.0f).submit(&r));
    }
    TEST_ORCH_TRY(Task(api, 2, SIMPLER_CORE_AIV).in(x).in(t).out(x).submit(&r));
  }
  return 0;
}
