// acc = op(acc, x) elementwise over 1-D tensors of one dtype (float32, float16, bfloat16,
// int32); op 0 = sum, 1 = max, 2 = min. Half types are widened to float and rounded back
// to nearest-even, as a chip's vector unit would; int32 sums wrap (two's complement).
#include <stdint.h>
#include <string.h>

#include "simpler/kernel/kernel_abi.h"

namespace {

float bits_to_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t float_to_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

float bf16_to_float(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_bf16(float f) {
  const uint32_t bits = float_to_bits(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_to_float(sign | 0x7f800000u | (man << 13));
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_f16(float f) {
  const uint32_t bits = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;        // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;       // rounds to infinity (>= 65520)
  if (abs < 0x38800000u) {                             // below the smallest normal: subnormal
    const float v = bits_to_float(abs) * 16777216.0f;  // in units of 2^-24, exact
    uint32_t q = static_cast<uint32_t>(v);
    const float rest = v - static_cast<float>(q);
    if (rest > 0.5f || (rest == 0.5f && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // nearest-even on 13 bits
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

float combine(float a, float b, int64_t op) {
  if (op == 1) return a > b ? a : b;
  if (op == 2) return a < b ? a : b;
  return a + b;
}

int32_t combine_i32(int32_t a, int32_t b, int64_t op) {
  if (op == 1) return a > b ? a : b;
  if (op == 2) return a < b ? a : b;
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

}  // namespace

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* acc = simpler_tensor_arg(args, 0);
  const ChipTensor* x = simpler_tensor_arg(args, 1);
  const int64_t op = simpler_scalar_i64(args, 2);
  if (acc->ndims != 1 || x->ndims != 1 || acc->shapes[0] != x->shapes[0] ||
      acc->dtype != x->dtype || op < 0 || op > 2) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const int64_t n = acc->shapes[0];
  const int64_t blocks = simpler_block_num(args);
  const int64_t chunk = (n + blocks - 1) / blocks;
  const int64_t begin = chunk * simpler_block_idx(args);
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  switch (acc->dtype) {
    case CHIP_DT_FLOAT32: {
      float* a = static_cast<float*>(simpler_tensor_data(acc, 4));
      const float* b = static_cast<const float*>(simpler_tensor_data(x, 4));
      for (int64_t i = begin; i < end; ++i) a[i] = combine(a[i], b[i], op);
      break;
    }
    case CHIP_DT_INT32: {
      int32_t* a = static_cast<int32_t*>(simpler_tensor_data(acc, 4));
      const int32_t* b = static_cast<const int32_t*>(simpler_tensor_data(x, 4));
      for (int64_t i = begin; i < end; ++i) a[i] = combine_i32(a[i], b[i], op);
      break;
    }
    case CHIP_DT_FLOAT16: {
      uint16_t* a = static_cast<uint16_t*>(simpler_tensor_data(acc, 2));
      const uint16_t* b = static_cast<const uint16_t*>(simpler_tensor_data(x, 2));
      for (int64_t i = begin; i < end; ++i) {
        a[i] = float_to_f16(combine(f16_to_float(a[i]), f16_to_float(b[i]), op));
      }
      break;
    }
    case CHIP_DT_BFLOAT16: {
      uint16_t* a = static_cast<uint16_t*>(simpler_tensor_data(acc, 2));
      const uint16_t* b = static_cast<const uint16_t*>(simpler_tensor_data(x, 2));
      for (int64_t i = begin; i < end; ++i) {
        a[i] = float_to_bf16(combine(bf16_to_float(a[i]), bf16_to_float(b[i]), op));
      }
      break;
    }
    default:
      simpler_kernel_fail(args, 2);
  }
}
