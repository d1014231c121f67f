// One decoder layer of a transformer, as simpler tasks. The entry tensors are
//   0 x[T,H]  1 attn_norm[H]  2 wq[H,H]  3 wk[H,H]  4 wv[H,H]  5 wo[H,H]  6 mlp_norm[H]
//   7 w_gate[H,F]  8 w_up[H,F]  9 w_down[F,H]  10 rope_cos[P,D/2]  11 rope_sin[P,D/2]
//   12 k_cache[P,H]  13 v_cache[P,H]  14 out[T,H]
// and the scalars 0 pos0 (position of x's first row), 1 step_tokens (rows per step),
// 2 heads. The T rows of x are processed in steps of step_tokens rows: a prefill is one
// step of many rows, a decode loop many steps of one row. Each step appends its K/V
// rows to the caches in place; the next step's attention reads them, and the runtime
// orders that from the tensors alone (no barrier between steps).
//
// Matmuls run on cube (AIC) cores in tiles of kTile rows x kTile columns, the rest on
// vector (AIV) cores. Every intermediate is runtime-allocated inside the step's scope,
// so memory is reclaimed step by step.
//
// Two entries: `decoder_layer` runs each head's attention as unfused tasks (QK^T matmul
// tiles, a softmax, P.V matmul tiles), `decoder_layer_fused` as one cluster (MIX) task
// per head (kernels/attention.cpp: QK^T and P.V on the cluster's cube core, the softmax on
// its two vector cores, the score tiles handed over in the cluster buffer). Same numbers.
#include <cmath>

#include "simpler/orch/orchestration_api.h"

namespace {
enum Kernel : int32_t { kMatmul = 0, kRmsNorm, kRope, kSoftmax, kAdd, kSiluMul, kCopy, kAttention };
constexpr int64_t kTile = 32;
constexpr float kEps = 1e-6f;

using simpler::orch::Task;

ChipTensor view(const ChipTensor& t, int64_t row, int64_t rows, int64_t col, int64_t cols) {
  ChipTensor v = t;
  v.start_offset = t.start_offset + row * t.strides[0] + col * t.strides[1];
  v.shapes[0] = rows;
  v.shapes[1] = cols;
  return v;
}

ChipTensor transposed(const ChipTensor& t) {
  ChipTensor v = t;
  v.shapes[0] = t.shapes[1];
  v.shapes[1] = t.shapes[0];
  v.strides[0] = t.strides[1];
  v.strides[1] = t.strides[0];
  return v;
}

struct Layer {
  const SimplerOrchApi* api;
  uint32_t dtype;

  int alloc(int64_t rows, int64_t cols, ChipTensor* out) const {
    const int64_t shape[2] = {rows, cols};
    return api->alloc_tensor(api->rt, 2, shape, dtype, out);
  }

  // c = a @ b in kTile x kTile output tiles (the last tile may be smaller).
  int matmul(const ChipTensor& a, const ChipTensor& b, const ChipTensor& c) const {
    const int64_t m = c.shapes[0], n = c.shapes[1], k = a.shapes[1];
    for (int64_t i = 0; i < m; i += kTile) {
      const int64_t rows = m - i < kTile ? m - i : kTile;
      for (int64_t j = 0; j < n; j += kTile) {
        const int64_t cols = n - j < kTile ? n - j : kTile;
        SimplerTaskResult r;
        const int rc = Task(api, kMatmul, SIMPLER_CORE_AIC)
                           .in(view(a, i, rows, 0, k))
                           .in(view(b, 0, k, j, cols))
                           .out(view(c, i, rows, j, cols))
                           .submit(&r);
        if (rc != 0) return rc;
      }
    }
    return 0;
  }

  int vector(Kernel kernel, const ChipTensor& a, const ChipTensor& b, const ChipTensor& c) const {
    SimplerTaskResult r;
    return Task(api, kernel, SIMPLER_CORE_AIV).in(a).in(b).out(c).submit(&r);
  }

  int rmsnorm(const ChipTensor& x, const ChipTensor& w, const ChipTensor& y) const {
    SimplerTaskResult r;
    return Task(api, kRmsNorm, SIMPLER_CORE_AIV).in(x).in(w).out(y).scalar_f32(kEps).submit(&r);
  }
};

int check(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 15 || args->scalar_count != 3)
    return api->fatal(api->rt, "decoder_layer: expected 15 tensors and 3 scalars");
  for (uint32_t i = 0; i < args->tensor_count; ++i)
    if (args->tensors[i].dtype != args->tensors[0].dtype)
      return api->fatal(api->rt, "decoder_layer: every tensor must have x's dtype");
  return 0;
}

int layer_program(const ChipStorageTaskArgs* args, const SimplerOrchApi* api, bool fused) {
  if (int rc = check(args, api)) return rc;
  const ChipTensor* t = args->tensors;
  const ChipTensor &x = t[0], &attn_norm = t[1], &wq = t[2], &wk = t[3], &wv = t[4], &wo = t[5];
  const ChipTensor &mlp_norm = t[6], &w_gate = t[7], &w_up = t[8], &w_down = t[9];
  const ChipTensor &rope_cos = t[10], &rope_sin = t[11], &k_cache = t[12], &v_cache = t[13];
  const ChipTensor& out = t[14];
  const int64_t pos0 = static_cast<int64_t>(args->scalars[0]);
  const int64_t step_tokens = static_cast<int64_t>(args->scalars[1]);
  const int64_t heads = static_cast<int64_t>(args->scalars[2]);
  const int64_t tokens = x.shapes[0], hidden = x.shapes[1], ffn = w_gate.shapes[1];
  if (step_tokens <= 0 || heads <= 0 || hidden % heads != 0 || tokens % step_tokens != 0 ||
      pos0 < 0 || pos0 + tokens > k_cache.shapes[0])
    return api->fatal(api->rt, "decoder_layer: bad step_tokens/heads/pos0 for these shapes");
  const int64_t head_dim = hidden / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const Layer layer{api, x.dtype};

  for (int64_t row = 0; row < tokens; row += step_tokens) {
    simpler::orch::Scope scope(api);  // this step's intermediates are reclaimed after it
    if (scope.status() != 0) return scope.status();
    const int64_t n = step_tokens, pos = pos0 + row, seen = pos + n;
    const ChipTensor x_rows = view(x, row, n, 0, hidden);
    ChipTensor h, q, k, v, attn, o, h1, h2, gate, up, act, down;
    int rc = 0;
    for (ChipTensor* a : {&h, &q, &k, &v, &attn, &o, &h1, &h2, &down})
      if (rc == 0) rc = layer.alloc(n, hidden, a);
    for (ChipTensor* a : {&gate, &up, &act})
      if (rc == 0) rc = layer.alloc(n, ffn, a);
    if (rc != 0) return rc;

    // Attention block: norm, projections, rotary, cache append, causal attention.
    if ((rc = layer.rmsnorm(x_rows, attn_norm, h)) || (rc = layer.matmul(h, wq, q)) ||
        (rc = layer.matmul(h, wk, k)) || (rc = layer.matmul(h, wv, v)))
      return rc;
    for (int64_t head = 0; head < heads; ++head) {
      for (const ChipTensor* target : {&q, &k}) {
        SimplerTaskResult r;
        rc = Task(api, kRope, SIMPLER_CORE_AIV)
                 .inout(view(*target, 0, n, head * head_dim, head_dim))
                 .in(rope_cos)
                 .in(rope_sin)
                 .scalar(pos)
                 .submit(&r);
        if (rc != 0) return rc;
      }
    }
    for (auto [src, cache] : {std::pair{&k, &k_cache}, std::pair{&v, &v_cache}}) {
      SimplerTaskResult r;
      rc = Task(api, kCopy, SIMPLER_CORE_AIV)
               .in(*src)
               .out(view(*cache, pos, n, 0, hidden))
               .submit(&r);
      if (rc != 0) return rc;
    }
    for (int64_t head = 0; head < heads && fused; ++head) {
      const int64_t col = head * head_dim;
      SimplerTaskResult r;
      rc = Task(api, kAttention, SIMPLER_CORE_MIX)  // one cluster
               .in(view(q, 0, n, col, head_dim))
               .in(view(k_cache, 0, seen, col, head_dim))
               .in(view(v_cache, 0, seen, col, head_dim))
               .out(view(attn, 0, n, col, head_dim))
               .scalar_f32(scale)
               .scalar(pos)
               .submit(&r);
      if (rc != 0) return rc;
    }
    for (int64_t head = 0; head < heads && !fused; ++head) {
      const int64_t col = head * head_dim;
      ChipTensor scores;
      if ((rc = layer.alloc(n, seen, &scores))) return rc;
      const ChipTensor keys = view(k_cache, 0, seen, col, head_dim);
      if ((rc = layer.matmul(view(q, 0, n, col, head_dim), transposed(keys), scores))) return rc;
      SimplerTaskResult r;
      rc = Task(api, kSoftmax, SIMPLER_CORE_AIV)
               .inout(scores)
               .scalar_f32(scale)
               .scalar(pos)
               .submit(&r);
      if (rc != 0) return rc;
      if ((rc = layer.matmul(scores, view(v_cache, 0, seen, col, head_dim),
                             view(attn, 0, n, col, head_dim))))
        return rc;
    }
    if ((rc = layer.matmul(attn, wo, o)) || (rc = layer.vector(kAdd, x_rows, o, h1))) return rc;

    // MLP block: norm, gate/up projections, SiLU * up, down projection, residual.
    if ((rc = layer.rmsnorm(h1, mlp_norm, h2)) || (rc = layer.matmul(h2, w_gate, gate)) ||
        (rc = layer.matmul(h2, w_up, up)) || (rc = layer.vector(kSiluMul, gate, up, act)) ||
        (rc = layer.matmul(act, w_down, down)) ||
        (rc = layer.vector(kAdd, h1, down, view(out, row, n, 0, hidden))))
      return rc;
  }
  return 0;
}
}  // namespace

extern "C" int decoder_layer(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  return layer_program(args, api, false);
}

extern "C" int decoder_layer_fused(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  return layer_program(args, api, true);
}
