// Writers of the diagnostics files.
#include "diagnostics.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt {
namespace {

using json = nlohmann::json;

bool write_file(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << text;
  if (out) out.flush();
  if (!out) {
    *error = "cannot write " + path + ": " + std::strerror(errno) +
             " (check that output_prefix names a writable directory)";
    return false;
  }
  return true;
}

const char* core_name(uint32_t type) {
  return type == SIMPLER_CORE_AIC ? "AIC" : type == SIMPLER_CORE_AIV ? "AIV" : "MIX";
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

bool write_dep_graph(const std::string& path, const std::vector<GraphNode>& nodes,
                     const std::vector<GraphEdge>& edges, std::string* error) {
  std::ostringstream s;
  s << "digraph deps {\n";
  for (const GraphNode& n : nodes) {
    s << "  t" << n.id << " [label=\"t" << n.id << " f" << n.func_id << " "
      << core_name(n.core_type);
    if (n.block_num > 1) s << " x" << n.block_num;
    s << "\"];\n";
  }
  for (const GraphEdge& e : edges) s << "  t" << e.from << " -> t" << e.to << ";\n";
  s << "}\n";
  return write_file(path, s.str(), error);
}

namespace {

constexpr int kCountersPid = 0;  // the run: ready-queue counters
int core_pid(uint32_t type) { return type == SIMPLER_CORE_AIC ? 1 : 2; }

// Chrome-trace timestamps are microseconds; ns / 1000 as a double prints exactly (the
// shortest round-trip form: "1234.567"), so nanosecond differences survive any run length.
double micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

json metadata(const char* name, int pid, const json& args, const json* tid = nullptr) {
  json e = {{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", args}};
  if (tid != nullptr) e["tid"] = *tid;
  return e;
}

struct TaskTimes {
  int64_t first_start = INT64_MAX;
  const SwimlaneEvent* last = nullptr;  // the block that ended last
  const SwimlaneEvent* first = nullptr;
};

}  // namespace

bool write_swimlane(const std::string& path, const SwimlaneTrace& trace, std::string* error) {
  const int64_t origin = trace.origin_ns;
  std::vector<json> out;
  std::string run_name = "run ";
  run_name += trace.program;
  out.push_back(metadata("process_name", kCountersPid, {{"name", run_name}}));
  out.push_back(metadata("process_sort_index", kCountersPid, {{"sort_index", 0}}));
  for (uint32_t type : {SIMPLER_CORE_AIC, SIMPLER_CORE_AIV}) {
    std::string cores_name = core_name(type);
    cores_name += " cores";
    out.push_back(metadata("process_name", core_pid(type), {{"name", cores_name}}));
    out.push_back(metadata("process_sort_index", core_pid(type), {{"sort_index", core_pid(type)}}));
  }
  // One thread (track) per core that ran something, named after the core.
  std::map<std::pair<uint32_t, uint32_t>, bool> cores;
  std::unordered_map<uint64_t, TaskTimes> tasks;
  for (const SwimlaneEvent& e : trace.events) {
    cores[{e.core_type, e.core_id}] = true;
    TaskTimes& t = tasks[e.task_id];
    if (e.start_ns < t.first_start) {
      t.first_start = e.start_ns;
      t.first = &e;
    }
    if (t.last == nullptr || e.end_ns > t.last->end_ns) t.last = &e;
  }
  for (const auto& [core, unused] : cores) {
    const json tid = core.second;
    std::string track = core_name(core.first);
    track += ' ';
    track += std::to_string(core.second);
    out.push_back(metadata("thread_name", core_pid(core.first), {{"name", track}}, &tid));
    out.push_back(
        metadata("thread_sort_index", core_pid(core.first), {{"sort_index", core.second}}, &tid));
  }
  // One complete event per kernel block.
  for (const SwimlaneEvent& e : trace.events) {
    std::string name = "f";
    name += std::to_string(e.func_id);
    out.push_back({{"ph", "X"},
                   {"cat", "kernel"},
                   {"name", name},
                   {"pid", core_pid(e.core_type)},
                   {"tid", e.core_id},
                   {"ts", micros(e.start_ns - origin)},
                   {"dur", micros(e.end_ns - e.start_ns)},
                   {"args",
                    {{"task", e.task_id},
                     {"func_id", e.func_id},
                     {"block", e.block_idx},
                     {"core_type", core_name(e.core_type)},
                     {"core", e.core_id},
                     {"start_ns", e.start_ns - origin},
                     {"end_ns", e.end_ns - origin}}}});
  }
  // A flow arrow per inferred dependency whose two tasks ran: from the producer's block
  // that ended last to the consumer's first block ("s" binds to the enclosing slice at its
  // ts, "f" with bp=e to the slice that starts at its ts).
  uint64_t flow_id = 0;
  std::unordered_map<uint64_t, int64_t> ready;  // task -> when its last producer ended
  for (const GraphEdge& edge : trace.edges) {
    const auto from = tasks.find(edge.from);
    const auto to = tasks.find(edge.to);
    if (from == tasks.end() || to == tasks.end()) continue;
    const SwimlaneEvent& p = *from->second.last;
    const SwimlaneEvent& c = *to->second.first;
    ++flow_id;
    out.push_back({{"ph", "s"},
                   {"cat", "dependency"},
                   {"name", "dependency"},
                   {"id", flow_id},
                   {"pid", core_pid(p.core_type)},
                   {"tid", p.core_id},
                   {"ts", micros(p.start_ns - origin)},
                   {"args", {{"task", edge.from}}}});
    out.push_back({{"ph", "f"},
                   {"bp", "e"},
                   {"cat", "dependency"},
                   {"name", "dependency"},
                   {"id", flow_id},
                   {"pid", core_pid(c.core_type)},
                   {"tid", c.core_id},
                   {"ts", micros(c.start_ns - origin)},
                   {"args", {{"task", edge.to}}}});
    int64_t& r = ready[edge.to];
    r = std::max(r, p.end_ns);
  }
  // Ready-queue depth per core type, inferred: a task is ready from its submission (or
  // its last producer's end, if later) until its first block starts.
  std::vector<std::tuple<int64_t, uint32_t, int>> changes;  // (time, core type, +1/-1)
  for (const GraphNode& n : trace.nodes) {
    const auto t = tasks.find(n.id);
    if (t == tasks.end() || n.submit_ns == 0) continue;
    int64_t from = n.submit_ns;
    if (const auto r = ready.find(n.id); r != ready.end()) from = std::max(from, r->second);
    if (from >= t->second.first_start) continue;
    changes.emplace_back(from, n.core_type, +1);
    changes.emplace_back(t->second.first_start, n.core_type, -1);
  }
  std::sort(changes.begin(), changes.end());
  int64_t depth[3] = {0, 0, 0};
  bool mix = false;  // a MIX counter only in traces with cluster tasks
  for (const auto& change : changes) mix = mix || std::get<1>(change) == SIMPLER_CORE_MIX;
  for (size_t i = 0; i < changes.size(); ++i) {
    const auto& [when, type, delta] = changes[i];
    depth[std::min<uint32_t>(type, SIMPLER_CORE_MIX)] += delta;
    if (i + 1 < changes.size() && std::get<0>(changes[i + 1]) == when) continue;
    json counts = {{"AIC", depth[0]}, {"AIV", depth[1]}};
    if (mix) counts["MIX"] = depth[2];
    out.push_back({{"ph", "C"},
                   {"name", "ready tasks"},
                   {"pid", kCountersPid},
                   {"ts", micros(when - origin)},
                   {"args", counts}});
  }

  // One event per line (grep-able, diff-able); every string escaped by the library
  // (control characters as \u00XX, invalid UTF-8 replaced).
  std::string text = "{\"displayTimeUnit\":\"ns\",\"otherData\":";
  const json other = {{"format", "simpler-swimlane"},
                      {"format_version", kSwimlaneFormatVersion},
                      {"program", trace.program},
                      {"clock", "steady, ns since the start of the run"}};
  text += dump(other);
  text += ",\"traceEvents\":[";
  for (size_t i = 0; i < out.size(); ++i) {
    text += i == 0 ? "\n" : ",\n";
    text += dump(out[i]);
  }
  text += "\n]}\n";
  return write_file(path, text, error);
}

bool write_entry_args(const std::string& path, const ChipStorageTaskArgs& args,
                      const std::vector<uint8_t>& signature, std::string* error) {
  static constexpr const char* kDirections[] = {"SCALAR", "IN", "OUT", "INOUT"};
  std::ostringstream s;
  s << "tensors " << args.tensor_count << "\n";
  for (uint32_t i = 0; i < args.tensor_count && i < CHIP_MAX_TENSOR_ARGS; ++i) {
    const ChipTensor& t = args.tensors[i];
    const uint8_t dir = i < signature.size() ? signature[i] : 0;
    s << "  [" << i << "] " << kDirections[dir & 3] << " addr=0x" << std::hex << t.buffer.addr
      << std::dec << " bytes=" << t.buffer.size << " offset=" << t.start_offset
      << " dtype=" << t.dtype << " shape=(";
    for (uint32_t d = 0; d < t.ndims && d < CHIP_TENSOR_MAX_DIMS; ++d)
      s << (d ? "," : "") << t.shapes[d];
    s << ") strides=(";
    for (uint32_t d = 0; d < t.ndims && d < CHIP_TENSOR_MAX_DIMS; ++d)
      s << (d ? "," : "") << t.strides[d];
    s << ")\n";
  }
  s << "scalars " << args.scalar_count << "\n";
  for (uint32_t i = 0; i < args.scalar_count && i < CHIP_MAX_SCALAR_ARGS; ++i) {
    s << "  [" << i << "] 0x" << std::hex << args.scalars[i] << std::dec << "\n";
  }
  return write_file(path, s.str(), error);
}

bool write_profile(const std::string& path, const RunSummary& r, std::string* error) {
  // Keys in this order (ordered_json): program, status, tasks, blocks, then the times.
  const nlohmann::ordered_json profile = {{"program", r.program},
                                          {"status", r.status},
                                          {"tasks", r.tasks},
                                          {"blocks", r.blocks},
                                          {"run_ns", r.run_ns},
                                          {"orchestration_ns", r.orchestration_ns},
                                          {"orchestration_own_ns", r.orchestration_own_ns},
                                          {"kernel_ns", r.kernel_ns}};
  return write_file(path, profile.dump(-1, ' ', false, json::error_handler_t::replace) + "\n",
                    error);
}

}  // namespace simpler::rt
