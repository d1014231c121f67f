// libFuzzer harness: the tensor and call-argument validators.
//
// Input layout: [signature length n (1 byte)] [n signature bytes] [ChipStorageTaskArgs
// bytes, zero-filled when short] [8-byte ops seed]. It runs validate_tensor,
// tensor_numel / tensor_byte_extent / views (slice, reshape, transpose) with parameters
// taken from the input, args_add_tensor / args_add_scalar, validate_call_config over the
// same bytes, and check_call_args (the C ABI's check of args against a signature) with a
// stub driver that knows one device allocation. Any outcome but a typed error or success
// (a crash, UB, an out-of-bounds read) is a finding.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "abi/abi_error.h"
#include "abi/arg_check.h"
#include "simpler/abi/status.h"
#include "simpler/task/task_interface.h"

// The one driver call check_device_tensor makes: one live allocation on device 0.
extern "C" int sim_pointer_device(const void* ptr, size_t size, int32_t* out_device) {
  constexpr uint64_t kBase = 0x10000, kBytes = 1 << 20;
  const auto p = reinterpret_cast<uint64_t>(ptr);
  if (p < kBase || p >= kBase + kBytes || size > kBase + kBytes - p) return SIM_ERR_INVALID_POINTER;
  *out_device = 0;
  return SIMPLER_OK;
}

namespace {

template <class Fn>
void typed(Fn&& fn) {
  try {
    fn();
  } catch (const simpler::TaskInterfaceError&) {
  } catch (const simpler::rt::host::AbiError&) {
  }
}

void exercise_tensor(const ChipTensor& t, uint64_t seed) {
  typed([&] {
    simpler::validate_tensor(t);
    (void)simpler::tensor_numel(t);
    (void)simpler::tensor_byte_extent(t);
    (void)simpler::tensor_is_contiguous(t);
    const uint32_t dim = static_cast<uint32_t>(seed % 8);
    const auto a = static_cast<int64_t>(static_cast<int8_t>(seed >> 8));
    const auto b = static_cast<int64_t>(static_cast<int16_t>(seed >> 16));
    typed([&] { simpler::validate_tensor(simpler::tensor_slice(t, dim, a, b)); });
    typed([&] {
      simpler::validate_tensor(
          simpler::tensor_transpose(t, dim, static_cast<uint32_t>(seed >> 32) % 8));
    });
    typed([&] {
      const int64_t shape[2] = {a, b};
      simpler::validate_tensor(simpler::tensor_reshape(t, std::span(shape, 1 + (seed >> 40) % 2)));
    });
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t n = std::min<size_t>(data[0], size - 1);
  std::vector<simpler::ArgDirection> signature;
  for (size_t i = 0; i < n; ++i)
    signature.push_back(static_cast<simpler::ArgDirection>(data[1 + i]));
  ChipStorageTaskArgs args{};
  const size_t rest = size - 1 - n;
  std::memcpy(&args, data + 1 + n, std::min(rest, sizeof args));
  uint64_t seed = 0;
  if (rest > sizeof args)
    std::memcpy(&seed, data + 1 + n + sizeof args, std::min<size_t>(rest - sizeof args, 8));

  for (const ChipTensor& t : args.tensors) exercise_tensor(t, seed);
  ChipStorageTaskArgs rebuilt{};
  for (uint32_t i = 0; i < 40; ++i) {
    typed([&] {
      if (i < CHIP_MAX_TENSOR_ARGS && (seed >> (i % 64)) & 1) {
        simpler::args_add_tensor(rebuilt, args.tensors[i]);
      } else {
        simpler::args_add_scalar(rebuilt, args.scalars[i % CHIP_MAX_SCALAR_ARGS]);
      }
    });
  }
  SimplerCallConfig config{};
  std::memcpy(&config, data + 1, std::min(size - 1, sizeof config));
  (void)simpler::validate_call_config(config);
  typed([&] { simpler::CallConfig::from_abi(config).validate(); });

  for (const ChipStorageTaskArgs* candidate : {&args, &rebuilt}) {
    typed([&] { simpler::rt::host::check_call_args(*candidate, signature, 0, (seed & 1) != 0); });
  }
  return 0;
}
