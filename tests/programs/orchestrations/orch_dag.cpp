// orch_dag [IN a, IN b, OUT f]: f = (a+b+1) * (a+b+2) + (a+b) with runtime-allocated
// intermediates in nested scopes. Children: 0 vector_add, 1 add_scalar, 2 mul.
#include "orch_util.h"

using simpler::orch::Scope;
using simpler::orch::Task;

extern "C" int orch_dag(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& a = args->tensors[0];
  const ChipTensor& b = args->tensors[1];
  const ChipTensor& f = args->tensors[2];
  const int64_t n = a.shapes[0];
  Scope outer(api);
  TEST_ORCH_TRY(outer.status());
  SimplerTaskResult s;
  TEST_ORCH_TRY(
      Task(api, 0, SIMPLER_CORE_AIV).in(a).in(b).out_alloc({n}, CHIP_DT_FLOAT32).submit(&s));
  {
    Scope inner(api);  // the intermediates below die with it; f is written inside it
    TEST_ORCH_TRY(inner.status());
    SimplerTaskResult t1, t2, p, out;
    TEST_ORCH_TRY(Task(api, 1, SIMPLER_CORE_AIV)
                      .in(s.outputs[0])
                      .out_alloc({n}, CHIP_DT_FLOAT32)
                      .scalar_f32(1.0f)
                      .submit(&t1));
    TEST_ORCH_TRY(Task(api, 1, SIMPLER_CORE_AIV)
                      .in(s.outputs[0])
                      .out_alloc({n}, CHIP_DT_FLOAT32)
                      .scalar_f32(2.0f)
                      .submit(&t2));
    TEST_ORCH_TRY(Task(api, 2, SIMPLER_CORE_AIV)
                      .in(t1.outputs[0])
                      .in(t2.outputs[0])
                      .out_alloc({n}, CHIP_DT_FLOAT32)
                      .submit(&p));
    TEST_ORCH_TRY(
        Task(api, 0, SIMPLER_CORE_AIV).in(p.outputs[0]).in(s.outputs[0]).out(f).submit(&out));
  }
  return 0;
}
