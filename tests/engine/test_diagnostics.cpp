// Diagnostics files: dependency graph (DOT), swimlane (per-block core/start/end), entry
// args and profile, written under output_prefix.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/diagnostics.h"
#include "engine_test_support.h"
#include "scratch.h"

namespace simpler::rt::testing {
namespace {

class DiagnosticsTest : public EngineTest {
 protected:
  // output_prefix is a directory (created by the run); prefix() + name is a file in it.
  std::string prefix() const { return dir_ + "/run/"; }
  SimplerCallConfig config(uint32_t flags) const {
    SimplerCallConfig c = default_config();
    c.flags = flags;
    std::snprintf(c.output_prefix, sizeof c.output_prefix, "%s", prefix().c_str());
    return c;
  }
  // Runs the DAG program, host-built (nothing completes while the graph is built, so every
  // edge is recorded), with the dependency graph on.
  void run_dag_with_dependency_graph() {
    auto e = make_engine(default_config(), /*build_graph_first=*/true);
    auto program = load(test_programs::dag());
    DeviceBuffer a(256), b(256), f(256);
    const SimplerCallConfig c = config(SIMPLER_CFG_DEP_GRAPH);
    std::string error;
    ASSERT_EQ(
        run(*e, *program, make_args({a.tensor({64}), b.tensor({64}), f.tensor({64})}), &error, &c),
        SIMPLER_OK)
        << error;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Every integer that follows `key` in `text`, in order.
  static std::vector<int64_t> numbers_after(const std::string& text, const std::string& key) {
    std::vector<int64_t> out;
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      out.push_back(std::stoll(text.substr(at + key.size(), 24)));
    }
    return out;
  }
  static size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
      ++n;
    return n;
  }
  simpler::test::ScratchDir scratch_;
  const std::string dir_ = scratch_.path().string();
};

TEST_F(DiagnosticsTest, DependencyGraphOfTheDag) {
  run_dag_with_dependency_graph();
  if (HasFatalFailure()) return;
  const std::string dot = slurp(prefix() + "deps.dot");
  ASSERT_EQ(dot.rfind("digraph deps {", 0), 0u) << dot;
  EXPECT_EQ(dot.back(), '\n');
  EXPECT_EQ(count(dot, "[label="), 5u) << dot;
  // s -> t1, s -> t2, t1 -> p, t2 -> p, p -> f, s -> f
  EXPECT_EQ(count(dot, " -> "), 6u) << dot;
  // The first node is s = a + b (func 0); t1, t2, p, f follow with consecutive ids.
  const std::vector<int64_t> nodes = numbers_after(dot, "  t");
  ASSERT_FALSE(nodes.empty());
  const int64_t s = nodes.front();
  EXPECT_NE(dot.find("t" + std::to_string(s) + " [label=\"t" + std::to_string(s) + " f0 AIV\"]"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("t" + std::to_string(s) + " -> t" + std::to_string(s + 1) + ";"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("t" + std::to_string(s + 3) + " -> t" + std::to_string(s + 4) + ";"),
            std::string::npos)
      << dot;
}

TEST_F(DiagnosticsTest, SwimlaneHasOneEventPerKernelBlock) {
  auto e = make_engine();
  auto program = load(test_programs::matmul());
  DeviceBuffer a(128 * 128 * 4), b(128 * 128 * 4), c(128 * 128 * 4);
  const SimplerCallConfig cfg =
      config(SIMPLER_CFG_SWIMLANE | SIMPLER_CFG_PROFILING | SIMPLER_CFG_DUMP_ARGS);
  std::string error;
  ASSERT_EQ(run(*e, *program,
                make_args({a.tensor({128, 128}), b.tensor({128, 128}), c.tensor({128, 128})}),
                &error, &cfg),
            SIMPLER_OK)
      << error;
  const std::string json = slurp(prefix() + "swimlane.json");
  ASSERT_EQ(json.rfind("{\"displayTimeUnit\":\"ns\",\"otherData\":{", 0), 0u)
      << json.substr(0, 200);
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
  // 2 x 2 output tiles x 2 k-tiles: 8 GEMMs (AIC) and 8 accumulates (AIV).
  EXPECT_EQ(count(json, "\"ph\":\"X\""), 16u);
  EXPECT_EQ(count(json, "\"core_type\":\"AIC\""), 8u);
  EXPECT_EQ(count(json, "\"core_type\":\"AIV\""), 8u);
  const std::vector<int64_t> starts = numbers_after(json, "\"start_ns\":");
  const std::vector<int64_t> ends = numbers_after(json, "\"end_ns\":");
  ASSERT_EQ(starts.size(), ends.size());
  for (size_t i = 0; i < starts.size(); ++i) EXPECT_LE(starts[i], ends[i]);
  const size_t events = starts.size();
  EXPECT_EQ(events, 16u);

  const std::string profile = slurp(prefix() + "profile.json");
  EXPECT_NE(profile.find("\"program\":\"orch_matmul\""), std::string::npos) << profile;
  EXPECT_NE(profile.find("\"tasks\":16,\"blocks\":16"), std::string::npos) << profile;
  const std::string args = slurp(prefix() + "args.txt");
  EXPECT_EQ(args.rfind("tensors 3\n", 0), 0u) << args;
  EXPECT_NE(args.find("shape=(128,128)"), std::string::npos) << args;
}

// The run's clocks are read only when a run asks for files (they cost a kernel-mode
// launch more than its empty program): a profiled run still times itself and its
// orchestration, also when it follows runs that asked for nothing.
TEST_F(DiagnosticsTest, ProfileTimesTheRunAndItsOrchestrationAfterUndiagnosedRuns) {
  auto e = make_engine();
  auto program = load(test_programs::matmul());
  DeviceBuffer a(128 * 128 * 4), b(128 * 128 * 4), c(128 * 128 * 4);
  const ChipStorageTaskArgs args =
      make_args({a.tensor({128, 128}), b.tensor({128, 128}), c.tensor({128, 128})});
  std::string error;
  const SimplerCallConfig plain = default_config();
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run(*e, *program, args, &error, &plain), SIMPLER_OK) << error;
  EXPECT_FALSE(std::filesystem::exists(prefix()));
  const SimplerCallConfig cfg = config(SIMPLER_CFG_PROFILING | SIMPLER_CFG_SWIMLANE);
  ASSERT_EQ(run(*e, *program, args, &error, &cfg), SIMPLER_OK) << error;
  const auto profile = nlohmann::json::parse(slurp(prefix() + "profile.json"));
  EXPECT_GT(profile["orchestration_ns"].get<int64_t>(), 0) << profile;
  EXPECT_GE(profile["run_ns"].get<int64_t>(), profile["orchestration_ns"].get<int64_t>())
      << profile;
  EXPECT_EQ(profile["blocks"].get<int64_t>(), 16) << profile;
  // An undiagnosed run in between: the next diagnosed run records only its own blocks.
  ASSERT_EQ(run(*e, *program, args, &error, &plain), SIMPLER_OK) << error;
  ASSERT_EQ(run(*e, *program, args, &error, &cfg), SIMPLER_OK) << error;
  EXPECT_EQ(count(slurp(prefix() + "swimlane.json"), "\"ph\":\"X\""), 16u);
}

TEST_F(DiagnosticsTest, SpmdBlocksSpreadOverCores) {
  auto e = make_engine();
  auto program = load(test_programs::spmd());
  DeviceBuffer y(96 * 4);
  const SimplerCallConfig cfg = config(SIMPLER_CFG_SWIMLANE);
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({y.tensor({96}, DataType::INT32)}, {48, SIMPLER_CORE_AIV}),
                &error, &cfg),
            SIMPLER_OK)
      << error;
  const std::string json = slurp(prefix() + "swimlane.json");
  const std::vector<int64_t> block_ids = numbers_after(json, "\"block\":");
  const std::vector<int64_t> core_ids = numbers_after(json, "\"core\":");
  const std::set<int64_t> blocks(block_ids.begin(), block_ids.end());
  const std::set<int64_t> cores(core_ids.begin(), core_ids.end());
  EXPECT_EQ(count(json, "\"core_type\":\"AIV\""), 48u);
  EXPECT_EQ(blocks.size(), 48u);
  EXPECT_EQ(*blocks.rbegin(), 47);
  EXPECT_GT(cores.size(), 1u) << "all blocks ran on one core";
}

// Blocks run by the schedulers' mailboxes and by the orchestrator's helping path (which
// borrows idle cores) never overlap on one core, and each block runs exactly once.
TEST_F(DiagnosticsTest, NoCoreRunsTwoBlocksAtOnce) {
  auto e = make_engine();
  auto program = load(test_programs::spmd());
  DeviceBuffer y(4 * 48 * 4);
  const SimplerCallConfig cfg = config(SIMPLER_CFG_SWIMLANE);
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // schedulers park
    std::string error;
    ASSERT_EQ(
        run(*e, *program, make_args({y.tensor({4 * 48}, DataType::INT32)}, {48, SIMPLER_CORE_AIV}),
            &error, &cfg),
        SIMPLER_OK)
        << error;
    const std::string json = slurp(prefix() + "swimlane.json");
    const std::vector<int64_t> blocks = numbers_after(json, "\"block\":");
    const std::vector<int64_t> cores = numbers_after(json, "\"core\":");
    const std::vector<int64_t> starts = numbers_after(json, "\"start_ns\":");
    const std::vector<int64_t> ends = numbers_after(json, "\"end_ns\":");
    ASSERT_EQ(blocks.size(), 48u);
    ASSERT_EQ(cores.size(), 48u);
    ASSERT_EQ(starts.size(), 48u);
    ASSERT_EQ(ends.size(), 48u);
    EXPECT_EQ(std::set<int64_t>(blocks.begin(), blocks.end()).size(), 48u) << "a block ran twice";
    for (size_t i = 0; i < 48; ++i) {
      for (size_t j = i + 1; j < 48; ++j) {
        if (cores[i] != cores[j]) continue;
        EXPECT_TRUE(ends[i] <= starts[j] || ends[j] <= starts[i])
            << "AIV core " << cores[i] << " ran blocks " << blocks[i] << " and " << blocks[j]
            << " at once";
      }
    }
  }
}

TEST_F(DiagnosticsTest, OutputPrefixIsADirectoryCreatedWhenMissing) {
  auto e = make_engine();
  auto program = load(test_programs::vector_add());
  DeviceBuffer a(64), b(64), c(64);
  SimplerCallConfig cfg = config(SIMPLER_CFG_DEP_GRAPH);
  const std::string nested = dir_ + "/not/yet/there";
  std::snprintf(cfg.output_prefix, sizeof cfg.output_prefix, "%s", nested.c_str());
  std::string error;
  EXPECT_EQ(
      run(*e, *program, make_args({a.tensor({16}), b.tensor({16}), c.tensor({16})}), &error, &cfg),
      SIMPLER_OK)
      << error;
  EXPECT_NE(slurp(nested + "/deps.dot").find("digraph"), std::string::npos);
}

TEST_F(DiagnosticsTest, UnwritableOutputIsAWarningNeverAFailedRun) {
  auto e = make_engine();
  auto program = load(test_programs::vector_add());
  DeviceBuffer a(64), b(64), c(64);
  const std::string file = dir_ + "/a-file";
  std::ofstream(file) << "x";
  SimplerCallConfig cfg = config(SIMPLER_CFG_DEP_GRAPH | SIMPLER_CFG_SWIMLANE);
  std::snprintf(cfg.output_prefix, sizeof cfg.output_prefix, "%s/sub", file.c_str());
  std::string error;
  EXPECT_EQ(
      run(*e, *program, make_args({a.tensor({16}), b.tensor({16}), c.tensor({16})}), &error, &cfg),
      SIMPLER_OK)
      << error;
}

// The trace is valid JSON (parsed by a real parser), names a track per core and type,
// and keeps nanosecond timing exactly: ts/dur are microseconds with the ns digits.
TEST_F(DiagnosticsTest, SwimlaneIsValidChromeTraceJson) {
  auto e = make_engine();
  auto program = load(test_programs::matmul());
  DeviceBuffer a(128 * 128 * 4), b(128 * 128 * 4), c(128 * 128 * 4);
  const SimplerCallConfig cfg = config(SIMPLER_CFG_SWIMLANE);
  std::string error;
  ASSERT_EQ(run(*e, *program,
                make_args({a.tensor({128, 128}), b.tensor({128, 128}), c.tensor({128, 128})}),
                &error, &cfg),
            SIMPLER_OK)
      << error;
  const nlohmann::json trace = nlohmann::json::parse(slurp(prefix() + "swimlane.json"));
  EXPECT_EQ(trace["otherData"]["format"], "simpler-swimlane");
  EXPECT_EQ(trace["otherData"]["format_version"], kSwimlaneFormatVersion);
  std::set<std::string> process_names, thread_names;
  size_t slices = 0;
  for (const auto& ev : trace["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "process_name") process_names.insert(ev["args"]["name"]);
    if (ev["ph"] == "M" && ev["name"] == "thread_name") thread_names.insert(ev["args"]["name"]);
    if (ev["ph"] != "X") continue;
    ++slices;
    const int64_t start = ev["args"]["start_ns"], end = ev["args"]["end_ns"];
    EXPECT_EQ(ev["ts"].get<double>(), static_cast<double>(start) / 1000.0);
    EXPECT_EQ(ev["dur"].get<double>(), static_cast<double>(end - start) / 1000.0);
    const std::string track =
        std::string(ev["args"]["core_type"]) + " " + std::to_string(ev["args"]["core"].get<int>());
    EXPECT_TRUE(thread_names.count(track)) << track << " has no thread_name before its slices";
  }
  EXPECT_EQ(slices, 16u);
  EXPECT_TRUE(process_names.count("AIC cores"));
  EXPECT_TRUE(process_names.count("AIV cores"));
  EXPECT_TRUE(process_names.count("run orch_matmul"));
}

// A task ordered after another (add_dependency) shows as one flow arrow from the
// producer's block to the consumer's, and the ready-queue counter is present.
TEST_F(DiagnosticsTest, SwimlaneDrawsADependencyAsAFlow) {
  auto program = load(test_programs::explicit_dep());
  auto e = make_engine();
  DeviceBuffer x(64), y(64);
  const SimplerCallConfig cfg = config(SIMPLER_CFG_SWIMLANE);
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({x.tensor({16}), y.tensor({16})}, {5}), &error, &cfg),
            SIMPLER_OK)
      << error;
  const nlohmann::json trace = nlohmann::json::parse(slurp(prefix() + "swimlane.json"));
  std::map<uint64_t, nlohmann::json> starts, finishes;
  std::map<uint64_t, int64_t> task_start, task_end;  // per task id, from its slices
  bool counter = false;
  for (const auto& ev : trace["traceEvents"]) {
    if (ev["ph"] == "s") starts[ev["id"]] = ev;
    if (ev["ph"] == "f") finishes[ev["id"]] = ev;
    if (ev["ph"] == "C" && ev["name"] == "ready tasks") counter = true;
    if (ev["ph"] == "X") {
      task_start[ev["args"]["task"]] = ev["args"]["start_ns"];
      task_end[ev["args"]["task"]] = ev["args"]["end_ns"];
    }
  }
  ASSERT_EQ(task_start.size(), 2u);
  ASSERT_EQ(starts.size(), 1u) << trace.dump();
  ASSERT_EQ(finishes.size(), 1u);
  const auto& s = starts.begin()->second;
  const auto& f = finishes.at(starts.begin()->first);
  const uint64_t producer = s["args"]["task"], consumer = f["args"]["task"];
  EXPECT_EQ(producer, task_start.begin()->first);
  EXPECT_EQ(consumer, std::next(task_start.begin())->first);
  EXPECT_EQ(f["bp"], "e");
  EXPECT_LE(task_end[producer], task_start[consumer]);
  EXPECT_LE(s["ts"].get<double>(), f["ts"].get<double>());
  EXPECT_TRUE(counter);
}

// Names with quotes, backslashes and control characters are escaped, not dropped.
TEST_F(DiagnosticsTest, SwimlaneEscapesControlCharactersInNames) {
  const std::string path = dir_ + "/escaped.json";
  SwimlaneTrace trace;
  trace.program = std::string(
      "a\x01"
      "b\"c\\d\n\x7f",
      9);
  trace.events.push_back(SwimlaneEvent{7, 1, 0, SIMPLER_CORE_AIV, 3, 1000, 2500});
  std::string error;
  ASSERT_TRUE(write_swimlane(path, trace, &error)) << error;
  const std::string text = slurp(path);
  EXPECT_NE(text.find("a\\u0001b\\\"c\\\\d\\n"), std::string::npos) << text;
  const nlohmann::json parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["otherData"]["program"], trace.program);
}

// With Graphviz installed, the dependency graph is also drawn as SVG.
TEST_F(DiagnosticsTest, DependencyGraphIsDrawnAsSvgWhenGraphvizIsInstalled) {
  if (system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "graphviz not installed";
  run_dag_with_dependency_graph();
  if (HasFatalFailure()) return;
  const std::string svg = slurp(prefix() + "deps.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos) << svg.substr(0, 200);
}

}  // namespace
}  // namespace simpler::rt::testing

namespace simpler::rt::testing {
namespace {

// profile.json's orchestration_own_ns is orchestration_ns without the kernel blocks the
// orchestrating thread ran itself meanwhile (work-first). fan_out's blocks sleep 20 ms, so
// the difference is 0 (none ran inline) or at least one whole block; a host-built graph
// runs nothing before its orchestration returned, so there the two are equal.
class OrchestrationOwnTest : public DiagnosticsTest, public ::testing::WithParamInterface<bool> {};

TEST_P(OrchestrationOwnTest, ExcludesTheBlocksTheOrchestratorRanItself) {
  const bool hbg = GetParam();
  auto e = make_engine(default_config(), hbg);
  auto program = load(test_programs::fan_out());
  DeviceBuffer counts(2 * sizeof(int32_t));
  counts.upload(std::vector<int32_t>{0, 0});
  const SimplerCallConfig cfg = config(SIMPLER_CFG_PROFILING);
  std::string error;
  ASSERT_EQ(
      run(*e, *program, make_args({counts.tensor({2}, DataType::INT32)}, {4, 20}), &error, &cfg),
      SIMPLER_OK)
      << error;
  const nlohmann::json profile = nlohmann::json::parse(slurp(prefix() + "profile.json"));
  const int64_t orchestration = profile.at("orchestration_ns").get<int64_t>();
  const int64_t own = profile.at("orchestration_own_ns").get<int64_t>();
  EXPECT_GE(own, 0) << profile.dump();
  EXPECT_LE(own, orchestration) << profile.dump();
  if (hbg) {
    EXPECT_EQ(own, orchestration) << profile.dump();
  } else {
    const int64_t inline_ns = orchestration - own;
    EXPECT_TRUE(inline_ns == 0 || inline_ns >= 20'000'000) << profile.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, OrchestrationOwnTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "HBG" : "TMR"; });

}  // namespace
}  // namespace simpler::rt::testing
