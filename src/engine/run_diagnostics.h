// simpler runtime — the diagnostics of a run as an observer (internal).
//
// RunDiagnostics records what a run's CallConfig flags ask for (observer.h callbacks) and
// writes the files after the run (diagnostics.h has the formats):
//   SIMPLER_CFG_SWIMLANE / SIMPLER_CFG_PROFILING  one event per kernel block, per lane
//   SIMPLER_CFG_DEP_GRAPH                         tasks and dependency edges
//   SIMPLER_CFG_DUMP_ARGS                         (nothing to record: the entry args)
// The engine hands it to the run only for what is asked: block_observer() is null unless
// a trace is recorded, graph_observer() unless the graph is.
//
// output_prefix names a directory, created when missing; the files are <dir>/args.txt,
// <dir>/deps.dot, ... When `numbered` (kernel mode, where every launch is a run), each
// run's files are <dir>/launch-<n>.<name> with n = 1, 2, ... per engine, zero-padded to
// six digits, so a launch never overwrites the previous one's files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnostics.h"
#include "observer.h"
#include "simpler/abi/chip_types.h"

namespace simpler::rt {

// What the engine knows about a finished run, for the files.
struct RunFacts {
  const ChipStorageTaskArgs* args = nullptr;
  const std::vector<uint8_t>* signature = nullptr;
  std::string program;
  int32_t status = 0;
  uint64_t tasks = 0;
  int64_t start_ns = 0;  // steady clock, around the orchestrator's run
  int64_t end_ns = 0;
  int64_t orchestration_ns = 0;
  int64_t orchestration_start_ns = 0;  // steady clock
};

class RunDiagnostics final : public RunObserver {
 public:
  // Between runs, on the caller's thread: what this run records, on how many lanes.
  void begin_run(const SimplerCallConfig& config, uint32_t lanes);
  RunObserver* block_observer() { return trace_ ? this : nullptr; }
  RunObserver* graph_observer() { return graph_ ? this : nullptr; }
  // After the run (every lane quiescent): writes the requested files. False with `error`
  // naming what could not be written (the others are still written); the caller reports
  // it as a warning: diagnostics never fail a run.
  bool write(const RunFacts& facts, std::string* error);
  void set_numbered(bool numbered) { numbered_ = numbered; }

  void set_up(uint32_t lanes) override;
  void on_entry(uint32_t lane, const BlockView& block) override;
  void on_exit(uint32_t lane, const BlockView& block) override;
  void on_task(const TaskView& task) override;
  void on_dependency(uint64_t from, uint64_t to) override;

 private:
  struct Lane {
    std::vector<SwimlaneEvent> events;
    int64_t entry_ns = 0;  // of the block running on this lane
  };

  std::string path_of(const char* name) const;

  uint32_t flags_ = 0;
  bool numbered_ = false;
  uint64_t written_runs_ = 0;  // runs that wrote files (the launch number when numbered_)
  std::string prefix_;
  bool trace_ = false;
  bool graph_ = false;
  std::vector<Lane> lanes_;
  std::vector<GraphNode> nodes_;
  std::vector<GraphEdge> edges_;
};

}  // namespace simpler::rt
