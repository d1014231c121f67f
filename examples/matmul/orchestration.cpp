// matmul: C = A @ B, tiled. For every output tile C[i,j] and every k:
//   AIC  P = A[i,k] @ B[k,j]       P: a runtime-allocated 64x64 intermediate
//   AIV  C[i,j] (+)= P             an INOUT view of C (k == 0 overwrites)
// The accumulations into one C tile overlap, so the runtime orders them (RAW/WAW);
// different C tiles do not overlap and proceed in parallel. Tiles are zero-copy views
// (start_offset + strides) into the entry tensors.
#include "simpler/orch/orchestration_api.h"

namespace {
constexpr int32_t kGemm = 0;  // func ids, as registered in main.py
constexpr int32_t kAccumulate = 1;
constexpr int64_t kTile = 64;

ChipTensor tile(const ChipTensor& m, int64_t row, int64_t col) {
  ChipTensor t = m;
  t.start_offset = m.start_offset + row * kTile * m.strides[0] + col * kTile * m.strides[1];
  t.shapes[0] = kTile;
  t.shapes[1] = kTile;
  return t;
}
}  // namespace

using simpler::orch::Task;

extern "C" int matmul_orchestration(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 3) return api->fatal(api->rt, "matmul: expected tensors A, B, C");
  const ChipTensor& a = args->tensors[0];
  const ChipTensor& b = args->tensors[1];
  const ChipTensor& c = args->tensors[2];
  const int64_t m = a.shapes[0], k = a.shapes[1], n = b.shapes[1];
  if (a.ndims != 2 || b.ndims != 2 || c.ndims != 2 || b.shapes[0] != k || c.shapes[0] != m ||
      c.shapes[1] != n || m % kTile != 0 || k % kTile != 0 || n % kTile != 0)
    return api->fatal(api->rt, "matmul: need 2-D A[M,K], B[K,N], C[M,N] with multiples of 64");

  for (int64_t i = 0; i < m / kTile; ++i) {
    for (int64_t j = 0; j < n / kTile; ++j) {
      simpler::orch::Scope scope(api);  // this tile's partial products can be reclaimed after it
      if (scope.status() != 0) return scope.status();
      const ChipTensor c_tile = tile(c, i, j);
      for (int64_t kk = 0; kk < k / kTile; ++kk) {
        SimplerTaskResult product, accumulated;
        int rc = Task(api, kGemm, SIMPLER_CORE_AIC)
                     .in(tile(a, i, kk))
                     .in(tile(b, kk, j))
                     .out_alloc({kTile, kTile}, CHIP_DT_FLOAT32)
                     .submit(&product);
        if (rc != 0) return rc;
        rc = Task(api, kAccumulate, SIMPLER_CORE_AIV, /*block_num=*/2)
                 .in(product.outputs[0])
                 .inout(c_tile)
                 .scalar(kk == 0 ? 1 : 0)
                 .submit(&accumulated);
        if (rc != 0) return rc;
      }
    }
  }
  return 0;
}
