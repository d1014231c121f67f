// simpler runtime — the diagnostics files of a run (internal).
//
// With CallConfig flags and an output_prefix, Engine::execute writes after the run:
//   SIMPLER_CFG_DEP_GRAPH  <prefix>deps.dot        the inferred dependency graph (DOT): one
//                                                  node per task, one edge per dependency on
//                                                  a task still in the window at submit time
//                                                  (HBG: every dependency) and per
//                                                  add_dependency
//                          <prefix>deps.svg        the same, drawn by Graphviz `dot` when it
//                                                  is on PATH (best effort, never an error)
//   SIMPLER_CFG_SWIMLANE   <prefix>swimlane.json   Chrome/Perfetto trace (docs/traces.md):
//                                                  one slice per kernel block on a track per
//                                                  core, flow arrows for the dependencies,
//                                                  a ready-queue depth counter
//   SIMPLER_CFG_DUMP_ARGS  <prefix>args.txt        the entry arguments
//   SIMPLER_CFG_PROFILING  <prefix>profile.json    run totals (tasks, blocks, times)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simpler/abi/chip_types.h"

namespace simpler::rt {

// One kernel execution (one block of a task) for the swimlane trace.
struct SwimlaneEvent {
  uint64_t task_id;
  int32_t func_id;
  uint32_t block_idx;
  uint32_t core_type;
  uint32_t core_id;
  int64_t start_ns;  // steady clock
  int64_t end_ns;
  uint32_t lane;  // the thread that ran it: 0 = the caller of execute(), 1.. = schedulers
};

struct GraphNode {
  uint64_t id;
  int32_t func_id;
  uint32_t core_type;
  uint32_t block_num;
  int64_t submit_ns;  // steady clock (the trace's ready-queue counters)
};
struct GraphEdge {
  uint64_t from;
  uint64_t to;
};

// Bump when a consumer of swimlane.json would read it differently (docs/traces.md).
constexpr int kSwimlaneFormatVersion = 2;

// What the swimlane trace is made of; times on the steady clock, shown relative to
// origin_ns (the start of the run). Edges and nodes may be empty (then no flows/counters).
struct SwimlaneTrace {
  std::string program;
  int64_t origin_ns = 0;
  std::vector<SwimlaneEvent> events;
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
};

struct RunSummary {
  std::string program;
  int32_t status = 0;
  uint64_t tasks = 0;
  uint64_t blocks = 0;
  int64_t run_ns = 0;
  int64_t orchestration_ns = 0;
  // orchestration_ns without the kernel blocks the orchestrating thread ran itself
  // meanwhile (work-first): what the orchestration and its API calls cost.
  int64_t orchestration_own_ns = 0;
  int64_t kernel_ns = 0;  // sum over blocks (swimlane events)
};

// Each returns false with `error` naming the file when it cannot be written.
bool write_dep_graph(const std::string& path, const std::vector<GraphNode>& nodes,
                     const std::vector<GraphEdge>& edges, std::string* error);
bool write_swimlane(const std::string& path, const SwimlaneTrace& trace, std::string* error);
// Renders a DOT file to SVG with Graphviz `dot` if it is on PATH (bounded wait); false when
// it is not installed or fails (the DOT file stays the contract).
bool render_svg(const std::string& dot_path, const std::string& svg_path);
bool write_entry_args(const std::string& path, const ChipStorageTaskArgs& args,
                      const std::vector<uint8_t>& signature, std::string* error);
bool write_profile(const std::string& path, const RunSummary& summary, std::string* error);

}  // namespace simpler::rt
