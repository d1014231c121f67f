// simpler runtime — what a LoadedProgram holds (internal; the engine reads it).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine.h"
#include "shared_object.h"
#include "simpler/abi/chip_types.h"
#include "simpler/orch/orchestration_api.h"

namespace simpler::rt {

// One child kernel: its entry point and signature (tensors first, then scalars).
struct LoadedKernel {
  simpler_kernel_entry_fn entry = nullptr;  // nullptr: no child with this func id
  uint32_t tensor_count = 0;
  uint32_t scalar_count = 0;
  std::array<uint8_t, CHIP_MAX_SIGNATURE> directions{};  // ChipArgDirection per tensor
  // Typed signatures: per argument the expected ChipDataType (kAnyDtype: any) and rank
  // (0: any); the core type the kernel was compiled for (-1: not recorded).
  static constexpr uint8_t kAnyDtype = 0xFF;
  std::array<uint8_t, CHIP_MAX_SIGNATURE> dtypes{};
  std::array<uint8_t, CHIP_MAX_SIGNATURE> ranks{};
  int32_t core_type = -1;

  // Per-kernel constants of the submit path's quick check, derived from `directions` by
  // seal() (the loader; a test that fills a kernel by hand calls it). Before seal() they
  // send every task to the full checks (`modes` 0) and the OUT_ALLOC scan (`out_alloc`).
  // Per tensor: the modes a task may pass there (bit m: mode_fits(m, direction)).
  std::array<uint8_t, CHIP_MAX_TENSOR_ARGS> modes{};
  bool out_alloc = true;  // some tensor may be OUT_ALLOC (an OUT direction)
  void seal();
};

// May a task pass a tensor in `mode` (SimplerTensorMode) where the kernel signature says
// `direction` (ChipArgDirection)?
bool mode_fits(uint32_t mode, uint8_t direction);

struct LoadedProgram::Impl {
  std::string func_name;
  simpler_orch_entry_fn orchestration = nullptr;
  std::vector<uint8_t> signature;  // ChipArgDirection of each entry argument
  uint32_t tensor_count = 0;       // entry tensors (the signature's non-scalar prefix)
  uint32_t scalar_count = 0;
  std::array<LoadedKernel, CHIP_MAX_FUNC_ID + 1> kernels{};
  std::vector<int32_t> func_ids;      // the children, ascending
  std::vector<SharedObject> objects;  // dlclose'd when the program goes away
};

}  // namespace simpler::rt
