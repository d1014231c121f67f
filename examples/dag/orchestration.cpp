// dag: f = (a + b + 1) * (a + b + 2) + (a + b), five tasks:
//
//   c = a + b ──┬── d = c + s1 ──┐
//               ├── e = c + s2 ──┴── g = d * e ──┐
//               └────────────────────────────────┴── f = g + c
//
// s1, s2 are the entry's scalars (1.0, 2.0). c, d, e, g are intermediates the runtime
// allocates (OUT_ALLOC) and reclaims when the scope closes and their readers retired.
// The runtime infers every edge above from the tensors; d and e run in parallel.
#include "simpler/orch/orchestration_api.h"

namespace {
constexpr int32_t kAdd = 0;  // func ids, as registered in main.py
constexpr int32_t kAddScalar = 1;
constexpr int32_t kMul = 2;
constexpr uint32_t kBlocks = 2;
}  // namespace

using simpler::orch::Task;

extern "C" int dag_orchestration(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 3 || args->scalar_count != 2 || args->tensors[0].ndims != 1)
    return api->fatal(api->rt, "dag: expected 1-D tensors a, b, f and scalars s1, s2");
  const ChipTensor& a = args->tensors[0];
  const ChipTensor& b = args->tensors[1];
  const ChipTensor& f = args->tensors[2];
  const int64_t n = a.shapes[0];

  simpler::orch::Scope scope(api);
  if (scope.status() != 0) return scope.status();
  SimplerTaskResult c, d, e, g, done;
  int rc = Task(api, kAdd, SIMPLER_CORE_AIV, kBlocks)
               .in(a)
               .in(b)
               .out_alloc({n}, CHIP_DT_FLOAT32)
               .submit(&c);
  if (rc != 0) return rc;
  rc = Task(api, kAddScalar, SIMPLER_CORE_AIV, kBlocks)
           .in(c.outputs[0])
           .out_alloc({n}, CHIP_DT_FLOAT32)
           .scalar_bits(args->scalars[0])
           .submit(&d);
  if (rc != 0) return rc;
  rc = Task(api, kAddScalar, SIMPLER_CORE_AIV, kBlocks)
           .in(c.outputs[0])
           .out_alloc({n}, CHIP_DT_FLOAT32)
           .scalar_bits(args->scalars[1])
           .submit(&e);
  if (rc != 0) return rc;
  rc = Task(api, kMul, SIMPLER_CORE_AIV, kBlocks)
           .in(d.outputs[0])
           .in(e.outputs[0])
           .out_alloc({n}, CHIP_DT_FLOAT32)
           .submit(&g);
  if (rc != 0) return rc;
  return Task(api, kAdd, SIMPLER_CORE_AIV, kBlocks)
      .in(g.outputs[0])
      .in(c.outputs[0])
      .out(f)
      .submit(&done);
}
