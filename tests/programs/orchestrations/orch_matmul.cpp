// orch_matmul [IN A (M x K), IN B (K x N), OUT C (M x N)], float32, every extent a
// multiple of 64: per 64x64 tile of C, one scope with, for each k-tile, an AIC GEMM
// into a runtime-allocated tile and an AIV accumulate into the view of C (INOUT; the
// first one overwrites). Children: 0 gemm_tile (AIC), 1 accumulate (AIV).
#include "orch_util.h"

using simpler::orch::Scope;
using simpler::orch::Task;

extern "C" int orch_matmul(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  constexpr int64_t kTile = 64;
  const ChipTensor& a = args->tensors[0];
  const ChipTensor& b = args->tensors[1];
  const ChipTensor& c = args->tensors[2];
  const int64_t m = a.shapes[0], k = a.shapes[1], n = b.shapes[1];
  if (m % kTile || k % kTile || n % kTile || b.shapes[0] != k || c.shapes[0] != m ||
      c.shapes[1] != n) {
    return api->fatal(api->rt, "orch_matmul: shapes must agree and be multiples of 64");
  }
  for (int64_t i = 0; i < m; i += kTile) {
    for (int64_t j = 0; j < n; j += kTile) {
      Scope scope(api);
      TEST_ORCH_TRY(scope.status());
      const ChipTensor c_tile = test_orch::tile_view(c, i, j, kTile, kTile);
      for (int64_t p = 0; p < k; p += kTile) {
        SimplerTaskResult g, acc;
        TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIC)
                          .in(test_orch::tile_view(a, i, p, kTile, kTile))
                          .in(test_orch::tile_view(b, p, j, kTile, kTile))
                          .out_alloc({kTile, kTile}, CHIP_DT_FLOAT32)
                          .submit(&g));
        TEST_ORCH_TRY(Task(api, 1, SIMPLER_CORE_AIV)
                          .inout(c_tile)
                          .in(g.outputs[0])
                          .scalar(p == 0 ? 1 : 0)
                          .submit(&acc));
      }
    }
  }
  return 0;
}
