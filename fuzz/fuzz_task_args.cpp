// libFuzzer harness: the tensor and call-argument validators.
//
// Input layout: [signature length n (1 byte)] [n signature bytes] [ChipStorageTaskArgs
// bytes, zero-filled when short] [8-byte ops seed] [optional 2n arg-type bytes: (dtype,
// rank) per entry, as a typed image carries them]. It runs validate_tensor,
// tensor_numel / tensor_byte_extent / views (slice, reshape, transpose) with parameters
// taken from the input, args_add_tensor / args_add_scalar, validate_call_config over the
// same bytes, and check_call_args (the C ABI's check of args against a signature, untyped
// and typed: arg_specs_of over the arg-type bytes) with a stub driver that
// knows one device allocation. Args that a kernel-mode launch accepts then go through what
// that launch does with them: the launch record's copy (LaunchRecord) and the checked-args
// cache (CheckedArgs), which must give back exactly the caller's args. Any outcome but a
// typed error or success (a crash, UB, an out-of-bounds read, a copy that differs) is a
// finding.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "abi/abi_error.h"
#include "abi/arg_check.h"
#include "abi/checked_args.h"
#include "abi/launch_pool.h"
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

// What kernel_mode_launch does with args it accepted: copy the used part into a launch
// record (expanded again for the engine) and remember them for the next launch's check.
void exercise_launch_copy(const ChipStorageTaskArgs& args) {
  simpler::rt::host::LaunchRecord record;
  record.store_args(args);
  ChipStorageTaskArgs scratch;
  const ChipStorageTaskArgs& got = record.expanded_args(scratch);
  if (got.tensor_count != args.tensor_count || got.scalar_count != args.scalar_count ||
      std::memcmp(got.tensors, args.tensors, sizeof(ChipTensor) * args.tensor_count) != 0 ||
      std::memcmp(got.scalars, args.scalars, sizeof(uint64_t) * args.scalar_count) != 0) {
    std::abort();  // the engine would run with other args than the caller's
  }
  simpler::rt::host::CheckedArgs checked;
  checked.remember(args, 7);
  const bool cacheable = args.tensor_count <= simpler::rt::host::CheckedArgs::kMaxTensors;
  if (checked.matches(args, 7) != cacheable || checked.matches(args, 8)) std::abort();
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

  // kernel_mode_launch asks its checked-args cache before checking anything: raw args,
  // against an empty cache (generation 0: an untouched device) and a remembered launch.
  simpler::rt::host::CheckedArgs cache;
  (void)cache.matches(args, 0);
  ChipStorageTaskArgs remembered{};
  remembered.tensor_count = static_cast<uint32_t>(seed % 12);  // up to kMaxTensors + 3
  remembered.scalar_count = args.scalar_count;
  cache.remember(remembered, 0);
  (void)cache.matches(args, 0);

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

  // Typed when the arg-type bytes are all there (arg_specs_of: else untyped). A dtype byte
  // the image parser would refuse (check_arg_types) reads as "any" here.
  const size_t typed_at = 1 + n + sizeof args + sizeof seed;
  const size_t type_count = size > typed_at ? std::min(size - typed_at, 2 * n) : 0;
  std::vector<simpler::ArgSpec> specs;
  typed([&] {
    specs = simpler::arg_specs_of(std::span(data + 1, n), std::span(data + typed_at, type_count));
  });
  for (simpler::ArgSpec& spec : specs) {
    if (spec.dtype && !simpler::is_valid_data_type(static_cast<uint32_t>(*spec.dtype))) {
      spec.dtype.reset();
    }
    typed([&] { (void)simpler::arg_spec_text(spec); });  // a bad direction is a typed error
  }
  for (const ChipStorageTaskArgs* candidate : {&args, &rebuilt}) {
    typed([&] { simpler::rt::host::check_call_args(*candidate, signature, 0, (seed & 1) != 0); });
    typed([&] {
      simpler::rt::host::check_call_args(*candidate, signature, 0, /*allow_host=*/false, specs);
      exercise_launch_copy(*candidate);  // accepted as a kernel-mode launch would be
    });
  }
  return 0;
}
