// simpler runtime host — a ChipCallable held by a context: its bytes in device memory
// (the code upload), the parsed view into those bytes, and the loaded program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/engine.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt::host {

// Full bounds-checked parse of a caller's image. Throws AbiError INVALID_ARGUMENT whose
// message names the offending field.
ChipCallableView parse_callable(const void* image, size_t size);

struct ResidentCallable {
  const uint8_t* bytes = nullptr;  // the uploaded copy (device memory, host-addressable)
  size_t size = 0;
  ChipCallableView view;  // views into `bytes`
  std::vector<ArgDirection> signature;
  std::vector<ArgSpec> typed;  // the typed signature; empty when no entry is typed
  // Shared by residents whose images are byte-identical (one load, many ids).
  std::shared_ptr<const LoadedProgram> program;
};

// Parses the uploaded copy at `bytes` and loads its program, or reuses the program of
// `same_image` (a resident with byte-identical bytes) when given. Throws AbiError: the
// load failure keeps LoadedProgram::load's own status.
ResidentCallable make_resident(const uint8_t* bytes, size_t size,
                               const ResidentCallable* same_image = nullptr);

}  // namespace simpler::rt::host
