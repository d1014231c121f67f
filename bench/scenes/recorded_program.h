// A chip program's task list, recorded by running its orchestration against a recording
// SimplerOrchApi on the host, so the same kernels can be driven without simpler: one
// after another on one thread (the serial floor) or by a oneTBB flow graph.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "cluster_runner.h"
#include "engine/shared_object.h"
#include "simpler/orch/orchestration_api.h"

namespace simpler::bench {

struct RecordedTask {
  int32_t func_id = 0;
  uint32_t core_type = 0;
  uint32_t block_num = 1;
  std::vector<ChipTensor> tensors;
  std::vector<uint32_t> modes;  // SimplerTensorMode per tensor
  std::vector<uint64_t> scalars;
  std::vector<uint32_t> after;  // explicit add_dependency predecessors (task indices)
};

// The orchestration and kernels of one ChipCallable image, loaded from bytes.
class RecordedProgram {
 public:
  // Throws std::runtime_error naming what failed.
  explicit RecordedProgram(std::span<const uint8_t> chip_callable_image);

  // Runs the orchestration on `args`, recording (not executing) its tasks. Runtime
  // allocations come from a host arena owned by this object.
  std::vector<RecordedTask> record(const ChipStorageTaskArgs& args);

  // Runs every block of one task on the calling thread, as a core would; a cluster
  // (MIX) task's AIV parts run on the helper threads of a ClusterRunner meanwhile.
  // Returns the CPU seconds the task used (all its parts). Thread-safe.
  double execute(const RecordedTask& task) const;

 private:
  rt::SharedObject orchestration_;
  simpler_orch_entry_fn entry_ = nullptr;
  std::vector<simpler_kernel_entry_fn> kernels_;  // by func id (nullptr: none)
  std::vector<rt::SharedObject> kernel_objects_;
  std::vector<std::unique_ptr<uint8_t[]>> arena_;
  // Idle cluster runners (one per cluster task running at once, created on demand).
  mutable std::mutex runners_mutex_;
  mutable std::vector<std::unique_ptr<ClusterRunner>> runners_;
};

// Edges (producer before consumer) inferred from the byte ranges each task reads and
// writes: RAW, WAW and WAR, like simpler's tensor map, plus explicit dependencies.
std::vector<std::vector<uint32_t>> infer_predecessors(const std::vector<RecordedTask>& tasks);

}  // namespace simpler::bench
