// libFuzzer harness: the bounds-checked callable-image reader.
//
// The input is parsed as a ChipCallable and as a CoreCallable image from an exact-size
// heap copy (ASan flags any read past it). Because the digest is checked last, random
// bytes never get past it; so the input is also parsed once more with its digest field
// resealed, which lets the fuzzer reach the accept path and the content checks. Whatever
// is accepted must only point inside the image; every byte of every view is read, and an
// accepted image's typed signature (arg_specs_of, as prepare/register build it) names only
// valid DataTypes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "simpler/task/task_interface.h"
#include "task_interface/image_digest.h"
#include "task_interface/image_format.h"

namespace {

volatile uint8_t g_sink;

void touch(std::span<const uint8_t> bytes, const uint8_t* base, size_t size) {
  if (bytes.empty()) return;
  if (bytes.data() < base || bytes.data() + bytes.size() > base + size) std::abort();
  uint8_t x = 0;
  for (uint8_t b : bytes) x ^= b;
  g_sink = x;
}

void parse(const uint8_t* data, size_t size) {
  std::string error;
  simpler::ChipCallableView chip;
  if (simpler::parse_chip_callable_image(data, size, &chip, &error)) {
    touch(chip.signature, data, size);
    touch({reinterpret_cast<const uint8_t*>(chip.func_name.data()), chip.func_name.size()}, data,
          size);
    touch(chip.binary, data, size);
    // What prepare/register derive from an accepted image: its typed signature.
    for (const simpler::ArgSpec& spec : simpler::arg_specs_of(chip.signature, chip.arg_types)) {
      if (spec.dtype && !simpler::is_valid_data_type(static_cast<uint32_t>(*spec.dtype))) {
        std::abort();  // check_arg_types let a dtype through that no DataType names
      }
      (void)simpler::arg_spec_text(spec);
    }
    for (const auto& child : chip.children) {
      if (child.func_id < 0 || child.func_id > CHIP_MAX_FUNC_ID) std::abort();
      touch(child.image, data, size);
      touch(child.callable.signature, data, size);
      touch(child.callable.binary, data, size);
    }
  } else if (error.empty()) {
    std::abort();  // a refusal always says why
  }
  error.clear();
  simpler::CoreCallableView core;
  if (simpler::parse_core_callable_image(data, size, &core, &error)) {
    touch(core.signature, data, size);
    touch(core.binary, data, size);
  } else if (error.empty()) {
    std::abort();
  }
}

void parse_copy(const uint8_t* data, size_t size, size_t reseal_at) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  if (size != 0) std::memcpy(copy.get(), data, size);
  if (reseal_at != 0) simpler::image::seal(copy.get(), size, reseal_at);
  parse(copy.get(), size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace image = simpler::image;
  parse_copy(data, size, 0);
  if (size >= image::kChipHeaderSize) parse_copy(data, size, image::kChipDigestAt);
  if (size >= image::kCoreHeaderSize) parse_copy(data, size, image::kCoreDigestAt);
  return 0;
}
