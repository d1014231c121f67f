// The diagnostics observer: records per lane during the run, writes the files after it.
#include "run_diagnostics.h"
#include "support/clock.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace simpler::rt {
void RunDiagnostics::begin_run(const SimplerCallConfig& config, uint32_t lanes) {
  // No flags now nor in the previous run: nothing recorded to clear and nothing to set up
  // (trace_ and graph_ are false already). Most runs, and every kernel-mode launch of a
  // context without diagnostics, take this path.
  if (config.flags == 0 && flags_ == 0) return;
  flags_ = config.flags;
  prefix_.assign(config.output_prefix, strnlen(config.output_prefix, SIMPLER_OUTPUT_PREFIX_MAX));
  trace_ = (flags_ & (SIMPLER_CFG_SWIMLANE | SIMPLER_CFG_PROFILING)) != 0;
  // The swimlane trace draws the dependencies (flows) and ready-queue counters too.
  graph_ = (flags_ & (SIMPLER_CFG_DEP_GRAPH | SIMPLER_CFG_SWIMLANE)) != 0;
  nodes_.clear();
  edges_.clear();
  set_up(lanes);
}

void RunDiagnostics::set_up(uint32_t lanes) {
  if (lanes_.size() < lanes) lanes_.resize(lanes);
  for (Lane& lane : lanes_) {
    lane.events.clear();
    if (trace_) lane.events.reserve(1024);  // capacity stays across runs
  }
}

void RunDiagnostics::on_entry(uint32_t lane, const BlockView&) {
  lanes_[lane].entry_ns = support::steady_now_ns();
}

void RunDiagnostics::on_exit(uint32_t lane, const BlockView& b) {
  Lane& l = lanes_[lane];
  l.events.push_back(SwimlaneEvent{b.task_id, b.func_id, b.block_idx, b.core_type, b.core_id,
                                   l.entry_ns, support::steady_now_ns(), lane});
}

void RunDiagnostics::on_task(const TaskView& t) {
  nodes_.push_back(GraphNode{t.id, t.func_id, t.core_type, t.block_num, support::steady_now_ns()});
}

void RunDiagnostics::on_dependency(uint64_t from, uint64_t to) {
  edges_.push_back(GraphEdge{from, to});
}

std::string RunDiagnostics::path_of(const char* name) const {
  std::string file = name;
  if (numbered_) {
    char launch[32];
    std::snprintf(launch, sizeof launch, "launch-%06" PRIu64 ".", written_runs_);
    file = launch + file;
  }
  return (std::filesystem::path(prefix_) / file).string();
}

bool RunDiagnostics::write(const RunFacts& facts, std::string* error) {
  if (flags_ == 0) return true;
  ++written_runs_;
  std::error_code ec;
  std::filesystem::create_directories(prefix_, ec);
  if (ec) {
    *error = "cannot create the output_prefix directory " + prefix_ + ": " + ec.message();
    return false;
  }
  bool written = true;
  if (flags_ & SIMPLER_CFG_DUMP_ARGS) {
    written =
        write_entry_args(path_of("args.txt"), *facts.args, *facts.signature, error) && written;
  }
  if (flags_ & SIMPLER_CFG_DEP_GRAPH) {
    const std::string dot = path_of("deps.dot");
    const bool ok = write_dep_graph(dot, nodes_, edges_, error);
    if (ok) render_svg(dot, path_of("deps.svg"));
    written = ok && written;
  }
  if (!trace_) return written;
  // Lane 0 (the caller of execute()) after the schedulers, as the files always listed it.
  std::vector<SwimlaneEvent> events;
  for (size_t i = 1; i <= lanes_.size(); ++i) {
    const std::vector<SwimlaneEvent>& lane = lanes_[i % lanes_.size()].events;
    events.insert(events.end(), lane.begin(), lane.end());
  }
  if (flags_ & SIMPLER_CFG_SWIMLANE) {
    SwimlaneTrace trace;
    trace.program = facts.program;
    trace.origin_ns = facts.start_ns;
    trace.events = std::move(events);
    trace.nodes = nodes_;
    trace.edges = edges_;
    written = write_swimlane(path_of("swimlane.json"), trace, error) && written;
    events = std::move(trace.events);
  }
  if (flags_ & SIMPLER_CFG_PROFILING) {
    RunSummary summary;
    summary.program = facts.program;
    summary.status = facts.status;
    summary.tasks = facts.tasks;
    summary.blocks = events.size();
    summary.run_ns = facts.end_ns - facts.start_ns;
    summary.orchestration_ns = facts.orchestration_ns;
    summary.orchestration_own_ns = facts.orchestration_ns;
    const int64_t orch_end = facts.orchestration_start_ns + facts.orchestration_ns;
    for (const SwimlaneEvent& e : events) {
      summary.kernel_ns += e.end_ns - e.start_ns;
      // Lane 0 is the orchestrating thread: its blocks inside the orchestration's time.
      if (e.lane == 0) {
        const int64_t from = std::max(e.start_ns, facts.orchestration_start_ns);
        const int64_t to = std::min(e.end_ns, orch_end);
        if (to > from) summary.orchestration_own_ns -= to - from;
      }
    }
    written = write_profile(path_of("profile.json"), summary, error) && written;
  }
  return written;
}

}  // namespace simpler::rt
