// Writers of the diagnostics files.
#include "diagnostics.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt {
namespace {

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

const char* core_name(uint32_t type) { return type == SIMPLER_CORE_AIC ? "AIC" : "AIV"; }

std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
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

bool write_swimlane(const std::string& path, const std::vector<SwimlaneEvent>& events,
                    int64_t origin_ns, std::string* error) {
  std::ostringstream s;
  s << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  for (const SwimlaneEvent& e : events) {
    s << (first ? "\n" : ",\n");
    first = false;
    const double ts = static_cast<double>(e.start_ns - origin_ns) / 1000.0;
    const double dur = static_cast<double>(e.end_ns - e.start_ns) / 1000.0;
    s << "{\"name\":\"f" << e.func_id << " t" << e.task_id << "\",\"ph\":\"X\",\"pid\":0,\"tid\":\""
      << core_name(e.core_type) << e.core_id << "\",\"ts\":" << ts << ",\"dur\":" << dur
      << ",\"args\":{\"task\":" << e.task_id << ",\"func_id\":" << e.func_id
      << ",\"block\":" << e.block_idx << ",\"core_type\":\"" << core_name(e.core_type)
      << "\",\"core\":" << e.core_id << ",\"start_ns\":" << (e.start_ns - origin_ns)
      << ",\"end_ns\":" << (e.end_ns - origin_ns) << "}}";
  }
  s << "\n]}\n";
  return write_file(path, s.str(), error);
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
  std::ostringstream s;
  s << "{\"program\":\"" << json_escape(r.program) << "\",\"status\":" << r.status
    << ",\"tasks\":" << r.tasks << ",\"blocks\":" << r.blocks << ",\"run_ns\":" << r.run_ns
    << ",\"orchestration_ns\":" << r.orchestration_ns << ",\"kernel_ns\":" << r.kernel_ns << "}\n";
  return write_file(path, s.str(), error);
}

}  // namespace simpler::rt
