// Fused causal attention of one head, as a cluster (MIX) task: the cube (AIC) part computes
// the scores S = Q K^T and the output O = softmax(S) V, the two vector (AIV) parts the
// softmax, and they hand the score tiles to each other through the cluster buffer. Same
// arithmetic as the unfused matmul / softmax / matmul tasks (layer_math.h), so the same
// bits: the scores are rounded to the tensor dtype as the unfused tasks store them.
//
// Tensors: 0 q[n, d] (IN), 1 keys[seen, d] (IN), 2 values[seen, d] (IN), 3 out[n, d] (OUT);
// scalars: 0 scale (float32), 1 pos0 (position of q's first row).
//
// The n query rows go in chunks of R rows through two score buffers (ping-pong), so the
// cube part computes the scores of chunk c + 1 while the vector parts normalise chunk c:
//   flag kReady + b: chunk in buffer b has scores (set once per AIV part);
//   flag kDone + b:  an AIV part finished its rows of buffer b (the AIC part takes 2).
#include "layer_math.h"

namespace {

constexpr uint32_t kReady = 0;  // flags 0, 1
constexpr uint32_t kDone = 2;   // flags 2, 3

struct Attention {
  int64_t* args;
  const SimplerClusterOps* cluster;
  layer::Matrix q, keys, values, out;
  float scale;
  int64_t pos0, rows_per_chunk, chunks;
  layer::Matrix buffer[2];  // score tiles of R x seen, in the tensors' dtype

  int64_t chunk_rows(int64_t c) const {
    const int64_t left = q.rows - c * rows_per_chunk;
    return left < rows_per_chunk ? left : rows_per_chunk;
  }
  layer::Matrix scores(int64_t c) const { return layer::rows_of(buffer[c % 2], 0, chunk_rows(c)); }

  // The cube part: S(c) = Q(c) K^T into a buffer; O(c) = P(c) V once it is normalised.
  int cube() const {
    const layer::Matrix kt = layer::transposed(keys);
    auto produce = [&](int64_t c) {
      layer::matmul_tile(layer::rows_of(q, c * rows_per_chunk, chunk_rows(c)), kt, scores(c));
      for (uint32_t a = 0; a < cluster->aiv_num; ++a)
        if (int rc = simpler_cluster_set_flag(args, kReady + c % 2)) return rc;
      return 0;
    };
    if (int rc = produce(0)) return rc;
    for (int64_t c = 0; c < chunks; ++c) {
      // The next chunk's buffer held chunk c - 1, whose output is already written.
      if (c + 1 < chunks)
        if (int rc = produce(c + 1)) return rc;
      for (uint32_t a = 0; a < cluster->aiv_num; ++a)
        if (int rc = simpler_cluster_wait_flag(args, kDone + c % 2)) return rc;
      layer::matmul_tile(scores(c), values, layer::rows_of(out, c * rows_per_chunk, chunk_rows(c)));
    }
    return 0;
  }

  // A vector part: the softmax of its half of each chunk's rows.
  int vector() const {
    for (int64_t c = 0; c < chunks; ++c) {
      if (int rc = simpler_cluster_wait_flag(args, kReady + c % 2)) return rc;
      const layer::Matrix s = scores(c);
      const int64_t half = (s.rows + cluster->aiv_num - 1) / cluster->aiv_num;
      const int64_t first = cluster->aiv_idx * half;
      const int64_t last = first + half < s.rows ? first + half : s.rows;
      for (int64_t i = first; i < last; ++i) {
        layer::softmax_row(s, i, scale, layer::causal_last(pos0, c * rows_per_chunk + i, s.cols));
      }
      if (int rc = simpler_cluster_set_flag(args, kDone + c % 2)) return rc;
    }
    return 0;
  }
};

}  // namespace

extern "C" void kernel_entry(int64_t* args) {
  Attention at{};
  at.args = args;
  at.cluster = simpler_cluster(args);
  if (at.cluster == nullptr || !layer::matrix(simpler_tensor_arg(args, 0), &at.q) ||
      !layer::matrix(simpler_tensor_arg(args, 1), &at.keys) ||
      !layer::matrix(simpler_tensor_arg(args, 2), &at.values) ||
      !layer::matrix(simpler_tensor_arg(args, 3), &at.out) || at.keys.cols != at.q.cols ||
      at.values.rows != at.keys.rows || at.out.rows != at.q.rows || at.out.cols != at.values.cols) {
    simpler_kernel_fail(args, 1);  // also: not run as a cluster task
    return;
  }
  at.scale = simpler_scalar_f32(args, 4);
  at.pos0 = simpler_scalar_i64(args, 5);
  const int64_t seen = at.keys.rows;
  const int64_t row_bytes = seen * static_cast<int64_t>(at.q.elem_size());
  const int64_t half_buffer = static_cast<int64_t>(at.cluster->buffer_bytes / 2);
  if (row_bytes > half_buffer || at.q.rows == 0) {
    simpler_kernel_fail(args, 2);  // one score row must fit half the cluster buffer
    return;
  }
  at.rows_per_chunk = half_buffer / row_bytes;
  at.chunks = (at.q.rows + at.rows_per_chunk - 1) / at.rows_per_chunk;
  for (int b = 0; b < 2; ++b) {
    layer::Matrix& m = at.buffer[b];
    m.dtype = at.q.dtype;
    m.base = static_cast<char*>(at.cluster->buffer) + b * half_buffer;
    m.rows = at.rows_per_chunk;
    m.cols = seen;
    m.row_stride = seen;
    m.col_stride = 1;
  }
  // A nonzero status means the run failed already (the runtime names why): just return.
  (void)(simpler_core_type(args) == SIMPLER_CORE_AIC ? at.cube() : at.vector());
}
