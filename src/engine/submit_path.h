// submit's inline path (internal): the quick validation, then the immediate run. Inline
// in the C table's submit entry (orch_api.cpp), so that a task run at its submit sets up
// one frame besides the kernel's guarded call; orchestrator.cpp holds the out-of-line rest
// (check_task, submit_queued), immediate_run.h the immediate run.
#pragma once

#include "engine_defaults.h"
#include "immediate_run.h"
#include "orchestrator.h"
#include "simpler/abi/status.h"
#include "tensor_shape.h"

namespace simpler::rt {

// The common case of check_task in one pass, building no message: true only when every
// check of check_task passes (each condition below is one of them). A cluster task, and
// a view this run has not checked yet, go to check_task.
// Inlined into validate_task; task_quick_ok is the same body out of line (tests).
[[gnu::always_inline]] inline bool Orchestrator::quick_ok_inline(const SimplerTaskDesc* d) {
  if (d == nullptr || d->func_id < 0 || d->func_id > CHIP_MAX_FUNC_ID) return false;
  const LoadedKernel& k = program_->kernels[d->func_id];
  if (k.entry == nullptr || d->core_type > SIMPLER_CORE_AIV || d->block_num < 1 ||
      d->block_num > kMaxBlockNum || d->tensor_count > CHIP_MAX_TENSOR_ARGS ||
      d->scalar_count > CHIP_MAX_SCALAR_ARGS ||
      (k.core_type >= 0 && static_cast<uint32_t>(k.core_type) != d->core_type) ||
      d->tensor_count != k.tensor_count || d->scalar_count != k.scalar_count) {
    return false;
  }
  for (uint32_t i = 0; i < d->tensor_count; ++i) {
    const SimplerTaskTensor& a = d->tensors[i];
    // k.modes[i]: mode_fits for this position, bit per mode (LoadedKernel::seal).
    if (a.mode > SIMPLER_TENSOR_NODEP || ((k.modes[i] >> a.mode) & 1u) == 0 ||
        (k.dtypes[i] != LoadedKernel::kAnyDtype && a.tensor.dtype != k.dtypes[i]) ||
        (k.ranks[i] != 0 && a.tensor.ndims != k.ranks[i]) ||
        (a.mode == SIMPLER_TENSOR_OUT_ALLOC ? !out_alloc_shape_ok(a.tensor)
                                            : !views_.hit(a.tensor, d->func_id, i))) {
      return false;
    }
  }
  return true;
}

[[gnu::always_inline]] inline bool Orchestrator::validate_task(const SimplerTaskDesc* d) {
  return quick_ok_inline(d) || check_task(d);
}

[[gnu::always_inline]] inline int Orchestrator::submit(const SimplerTaskDesc* desc,
                                                       SimplerTaskResult* result) {
  if (int code = status()) return code;
  bump_progress();
  if (!validate_task(desc)) return status();
  if (immediate_possible() && run_immediately(desc, result)) return SIMPLER_OK;
  return submit_queued(desc, result);
}

}  // namespace simpler::rt
