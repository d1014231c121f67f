// simpler runtime host — the opaque SimplerDeviceContext of the C ABI.
//
// A context is latched to one mode for life at its first init that takes a device claim:
// program mode (ProgramMode) or kernel mode (KernelMode). Refusals before the claim
// (argument errors, capability, current device, a device owned by another context) leave
// it fresh.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "abi/build_traits.h"
#include "abi/kernel_mode.h"
#include "abi/program_mode.h"

namespace simpler::rt::host {
enum class ContextMode : int { Fresh = 0, Program = 1, Kernel = 2 };
}

struct SimplerDeviceContext {
  explicit SimplerDeviceContext(const simpler::rt::host::BuildTraits& build_traits)
      : traits(build_traits) {}

  const simpler::rt::host::BuildTraits& traits;
  std::mutex init_mutex;  // serializes inits (the latch) and destroy's check
  // Published after `program` / `kernel` is set; never changes back.
  std::atomic<simpler::rt::host::ContextMode> mode{simpler::rt::host::ContextMode::Fresh};
  std::unique_ptr<simpler::rt::host::ProgramMode> program;
  std::unique_ptr<simpler::rt::host::KernelMode> kernel;
};
