#include "half_ops.h"

#include <cstdint>
#include <cstring>
#include <mutex>

namespace simpler::mpi {
namespace {

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t to_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

float bf16_to_float(uint16_t h) { return from_bits(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_bf16(float f) {
  const uint32_t bits = to_bits(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return from_bits(sign | 0x7f800000u | (man << 13));
  return from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_f16(float f) {
  const uint32_t bits = to_bits(f);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;
  if (abs >= 0x477ff000u) return sign | 0x7c00u;
  if (abs < 0x38800000u) {
    const float v = from_bits(abs) * 16777216.0f;
    auto q = static_cast<uint32_t>(v);
    const float rest = v - static_cast<float>(q);
    if (rest > 0.5f || (rest == 0.5f && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

template <bool kBf16, int kOp>
void combine(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* x = static_cast<const uint16_t*>(in);
  auto* acc = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const float a = kBf16 ? bf16_to_float(acc[i]) : f16_to_float(acc[i]);
    const float b = kBf16 ? bf16_to_float(x[i]) : f16_to_float(x[i]);
    const float r = kOp == 1 ? (a > b ? a : b) : kOp == 2 ? (a < b ? a : b) : a + b;
    acc[i] = kBf16 ? float_to_bf16(r) : float_to_f16(r);
  }
}

struct HalfOps {
  MPI_Op ops[2][3];
  HalfOps() {
    MPI_Op_create(&combine<false, 0>, 1, &ops[0][0]);
    MPI_Op_create(&combine<false, 1>, 1, &ops[0][1]);
    MPI_Op_create(&combine<false, 2>, 1, &ops[0][2]);
    MPI_Op_create(&combine<true, 0>, 1, &ops[1][0]);
    MPI_Op_create(&combine<true, 1>, 1, &ops[1][1]);
    MPI_Op_create(&combine<true, 2>, 1, &ops[1][2]);
  }
};

}  // namespace

MPI_Op half_op(bool bfloat16, int op) {
  if (op < 0 || op > 2) return MPI_OP_NULL;
  // Leaked on purpose: MPI_Op_free after MPI_Finalize is an error, and Python finalizes MPI
  // (mpi4py's atexit) in an order this module does not control.
  static HalfOps* const table = new HalfOps();
  return table->ops[bfloat16 ? 1 : 0][op];
}

}  // namespace simpler::mpi
