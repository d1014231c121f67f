// scene_bench: the decoder layer of examples/decoder_layer, end to end, as ratios in one run.
//
// For a prefill and a decode loop it runs, alternately, R times each:
//   simpler  Worker program mode on DEVICE tensors (orchestration + dispatch + kernels)
//   serial   the same kernels one after another on one thread, no runtime (the floor)
//   tbb      the same kernels driven by a oneTBB flow graph, dependencies inferred from
//            the same byte ranges (recording the orchestration and building the graph
//            are included, as simpler's orchestration is)
// and reports medians, the ideal parallel time (total kernel time / parallel workers,
// bounded below by the critical path) and simpler's ratios to each.
// Usage: scene_bench [--quick] [--rounds R]
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "recorded_program.h"
#include "simpler/task/task_interface.h"
#include "simpler/worker/kernel_compiler.h"
#include "simpler/worker/worker.h"

namespace {
using Clock = std::chrono::steady_clock;
using simpler::bench::RecordedProgram;
using simpler::bench::RecordedTask;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// User + system CPU seconds of every thread of this process so far.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path);
  return text.str();
}

struct Shape {
  const char* name;
  int64_t tokens, step_tokens, pos0;
  int64_t hidden = 128, heads = 4, ffn = 256, max_pos = 128;
};

simpler::ArgDirection direction_named(const std::string& word) {
  if (word == "IN") return simpler::ArgDirection::IN;
  if (word == "OUT") return simpler::ArgDirection::OUT;
  if (word == "INOUT") return simpler::ArgDirection::INOUT;
  if (word == "SCALAR") return simpler::ArgDirection::SCALAR;
  throw std::runtime_error("kernels.list: unknown direction '" + word + "'");
}

// The layer's kernels from examples/decoder_layer/kernels.list (the list layer.py reads
// too), compiled in func-id order, plus the orchestration.
simpler::ChipCallable build_program() {
  const std::string dir = SIMPLER_BENCH_LAYER_DIR;
  simpler::KernelCompilerOptions options;
  options.include_dirs.push_back(dir + "/kernels");
  simpler::KernelCompiler compiler(options);
  std::vector<std::pair<int32_t, simpler::CoreCallable>> children;
  std::istringstream list(read_file(dir + "/kernels.list"));
  int32_t func_id = 0;
  for (std::string line; std::getline(list, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string file, core, word;
    if (!(words >> file >> core)) continue;
    std::vector<simpler::ArgDirection> signature;
    while (words >> word) signature.push_back(direction_named(word));
    const auto binary = compiler.compile_kernel(read_file(dir + "/kernels/" + file),
                                                core == "aic"   ? simpler::CoreType::AIC
                                                : core == "mix" ? simpler::CoreType::MIX
                                                                : simpler::CoreType::AIV);
    children.emplace_back(func_id++, simpler::CoreCallable::build(signature, binary));
  }
  const auto orchestration =
      compiler.compile_orchestration(read_file(dir + "/orchestration.cpp"), "decoder_layer");
  std::vector<simpler::ArgDirection> signature(12, simpler::ArgDirection::IN);
  signature.insert(signature.end(), {simpler::ArgDirection::INOUT, simpler::ArgDirection::INOUT,
                                     simpler::ArgDirection::OUT});
  signature.insert(signature.end(), 3, simpler::ArgDirection::SCALAR);
  return simpler::ChipCallable::build(signature, "decoder_layer", orchestration, children);
}

// The 15 entry tensors of the layer (x, weights, rope tables, caches, out), float32.
std::vector<std::vector<int64_t>> tensor_shapes(const Shape& s) {
  const int64_t h = s.hidden, f = s.ffn, half = s.hidden / s.heads / 2;
  return {{s.tokens, h},
          {h},
          {h, h},
          {h, h},
          {h, h},
          {h, h},
          {h},
          {h, f},
          {h, f},
          {f, h},
          {s.max_pos, half},
          {s.max_pos, half},
          {s.max_pos, h},
          {s.max_pos, h},
          {s.tokens, h}};
}

std::vector<std::vector<float>> make_inputs(const Shape& s) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<std::vector<float>> arrays;
  for (const auto& shape : tensor_shapes(s)) {
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    std::vector<float> a(static_cast<size_t>(numel));
    for (float& v : a) v = normal(rng);
    arrays.push_back(std::move(a));
  }
  return arrays;
}

ChipStorageTaskArgs make_args(const Shape& s, const std::vector<uint64_t>& addresses) {
  ChipStorageTaskArgs args{};
  const auto shapes = tensor_shapes(s);
  for (size_t i = 0; i < shapes.size(); ++i)
    simpler::args_add_tensor(
        args, simpler::make_tensor(addresses[i], shapes[i], simpler::DataType::FLOAT32,
                                   simpler::AddressSpace::DEVICE));
  for (int64_t v : {s.pos0, s.step_tokens, s.heads})
    simpler::args_add_scalar(args, simpler::scalar_bits_from_i64(v));
  return args;
}

struct Figures {
  std::vector<double> simpler, serial, tbb;
  std::vector<double> simpler_cpu, tbb_cpu;       // process CPU seconds of those runs
  std::vector<std::vector<double>> task_seconds;  // per task, per round
  double total_kernel = 0, critical_path = 0;
  size_t tasks = 0;
};

Figures measure(const Shape& shape, const simpler::ChipCallable& program, int rounds,
                unsigned workers) {
  Figures fig;
  auto host = make_inputs(shape);
  std::vector<uint64_t> host_addresses;
  for (auto& a : host) host_addresses.push_back(reinterpret_cast<uint64_t>(a.data()));
  const ChipStorageTaskArgs host_args = make_args(shape, host_addresses);
  RecordedProgram recorded(program.bytes());

  simpler::Worker worker({.level = 2, .device_id = 0});
  worker.init();
  const auto handle = worker.register_callable(program);
  std::vector<uint64_t> device;
  for (auto& a : host) {
    device.push_back(worker.malloc(a.size() * sizeof(float)));
    worker.copy_to(device.back(), a.data(), a.size() * sizeof(float));
  }
  const ChipStorageTaskArgs device_args = make_args(shape, device);
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, workers);

  for (int r = 0; r < rounds; ++r) {
    auto start = Clock::now();
    const double cpu0 = process_cpu_seconds();
    worker.run(handle, device_args);
    fig.simpler.push_back(seconds_since(start));
    fig.simpler_cpu.push_back(process_cpu_seconds() - cpu0);

    const std::vector<RecordedTask> tasks = recorded.record(host_args);
    const auto preds = simpler::bench::infer_predecessors(tasks);
    std::vector<double> took(tasks.size());
    start = Clock::now();
    for (size_t t = 0; t < tasks.size(); ++t) {
      const auto task_start = Clock::now();
      recorded.execute(tasks[t]);
      took[t] = seconds_since(task_start);
    }
    fig.serial.push_back(seconds_since(start));
    if (r == 0) fig.task_seconds.assign(tasks.size(), {});
    for (size_t t = 0; t < tasks.size(); ++t) fig.task_seconds[t].push_back(took[t]);
    if (r == rounds - 1) {
      // Per-task medians over the rounds: the total kernel time and the critical path.
      fig.tasks = tasks.size();
      std::vector<double> finish(tasks.size());
      for (size_t t = 0; t < tasks.size(); ++t) {
        double ready = 0;
        for (uint32_t p : preds[t]) ready = std::max(ready, finish[p]);
        const double kernel = median(fig.task_seconds[t]);
        finish[t] = ready + kernel;
        fig.total_kernel += kernel;
      }
      fig.critical_path = *std::max_element(finish.begin(), finish.end());
    }

    start = Clock::now();
    const double tbb_cpu0 = process_cpu_seconds();
    {
      const std::vector<RecordedTask> graph_tasks = recorded.record(host_args);
      const auto graph_preds = simpler::bench::infer_predecessors(graph_tasks);
      tbb::flow::graph g;
      std::vector<std::unique_ptr<tbb::flow::continue_node<tbb::flow::continue_msg>>> nodes;
      nodes.reserve(graph_tasks.size());
      for (size_t t = 0; t < graph_tasks.size(); ++t)
        nodes.push_back(std::make_unique<tbb::flow::continue_node<tbb::flow::continue_msg>>(
            g, [&, t](const tbb::flow::continue_msg&) { recorded.execute(graph_tasks[t]); }));
      for (size_t t = 0; t < graph_tasks.size(); ++t)
        for (uint32_t p : graph_preds[t]) tbb::flow::make_edge(*nodes[p], *nodes[t]);
      for (size_t t = 0; t < graph_tasks.size(); ++t)
        if (graph_preds[t].empty()) nodes[t]->try_put(tbb::flow::continue_msg());
      g.wait_for_all();
    }
    fig.tbb.push_back(seconds_since(start));
    fig.tbb_cpu.push_back(process_cpu_seconds() - tbb_cpu0);
  }
  for (uint64_t d : device) worker.free(d);
  worker.close();
  return fig;
}
}  // namespace

// The decode loop as a serving loop runs it: one run per token (Worker::submit), every
// tensor in device memory, `depth` runs in flight (CallConfig.pipeline_depth). Returns the
// seconds from the first submit to the last completion.
ChipStorageTaskArgs step_args(const Shape& s, const std::vector<uint64_t>& device, int64_t t) {
  Shape one = s;
  one.tokens = one.step_tokens = 1;
  one.pos0 = s.pos0 + t;
  std::vector<uint64_t> addresses = device;
  const uint64_t row = static_cast<uint64_t>(s.hidden) * sizeof(float);
  addresses.front() += static_cast<uint64_t>(t) * row;  // x
  addresses.back() += static_cast<uint64_t>(t) * row;   // out
  return make_args(one, addresses);
}

double run_steps(simpler::Worker& worker, simpler::CallableHandle handle, const Shape& shape,
                 const std::vector<uint64_t>& device, uint32_t depth) {
  simpler::CallConfig config;
  config.pipeline_depth = depth;
  const auto start = Clock::now();
  std::vector<simpler::RunHandle> runs;
  runs.reserve(static_cast<size_t>(shape.tokens));
  for (int64_t t = 0; t < shape.tokens; ++t)
    runs.push_back(worker.submit(handle, step_args(shape, device, t), config));
  for (const auto& run : runs) run.wait();
  return seconds_since(start);
}

struct StepFigures {
  std::vector<double> unpipelined, pipelined;
  double orchestration_share = 0;  // of an unpipelined step, from its profile.json
};

StepFigures measure_steps(const Shape& shape, const simpler::ChipCallable& program, int rounds) {
  StepFigures fig;
  auto host = make_inputs(shape);
  simpler::Worker worker({.level = 2, .device_id = 0});
  worker.init();
  const auto handle = worker.register_callable(program);
  std::vector<uint64_t> device;
  for (auto& a : host) {
    device.push_back(worker.malloc(a.size() * sizeof(float)));
    worker.copy_to(device.back(), a.data(), a.size() * sizeof(float));
  }
  for (int r = 0; r < rounds; ++r) {
    fig.unpipelined.push_back(run_steps(worker, handle, shape, device, 1));
    fig.pipelined.push_back(run_steps(worker, handle, shape, device, 2));
  }
  // The orchestration's share of one step: profile.json's orchestration_ns / run_ns (the
  // orchestrating thread also runs ready kernels itself, so this is an upper bound).
  char dir[] = "/tmp/simpler-scene-bench-XXXXXX";
  if (mkdtemp(dir) != nullptr) {
    simpler::CallConfig profiled;
    profiled.enable_profiling = true;
    profiled.output_prefix = dir;
    std::vector<double> shares;
    for (int64_t t = 0; t < std::min<int64_t>(shape.tokens, 8); ++t) {
      worker.run(handle, step_args(shape, device, t), profiled);
      std::ifstream in(std::string(dir) + "/profile.json");
      const auto profile = nlohmann::json::parse(in, nullptr, false);
      if (!profile.is_discarded() && profile.value("run_ns", 0.0) > 0)
        shares.push_back(profile.value("orchestration_ns", 0.0) / profile.value("run_ns", 1.0));
    }
    fig.orchestration_share = median(shares);
    std::filesystem::remove_all(dir);
  }
  for (uint64_t d : device) worker.free(d);
  worker.close();
  return fig;
}

int main(int argc, char** argv) {
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      rounds = 3;
    else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: scene_bench [--quick] [--rounds R]\n");
      return 2;
    }
  }
  try {
    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    const simpler::ChipCallable program = build_program();
    // The last shape has the larger kernels (hidden 512: a 32x32 matmul tile is 32x512x32
    // multiply-adds) for the "kernels >= 20 us" target.
    const Shape shapes[] = {{"decoder prefill (64 tokens)", 64, 64, 0},
                            {"decode loop (16 steps x 1 token)", 16, 1, 64},
                            {"prefill, hidden 512 (64 tokens)", 64, 64, 0, 512, 8, 1024, 128}};
    std::printf("hardware threads %u (TBB limited to them); medians of %d alternating rounds\n",
                workers, rounds);
    std::printf("%-34s %6s %10s %10s %10s %10s %10s | %8s %8s %8s\n", "scene", "tasks",
                "simpler ms", "serial ms", "tbb ms", "ideal ms", "crit ms", "vs ideal", "vs tbb",
                "vs serial");
    for (const Shape& shape : shapes) {
      const Figures f = measure(shape, program, rounds, workers);
      const double ideal = std::max(f.total_kernel / workers, f.critical_path);
      const double s = median(f.simpler);
      std::printf("%-34s %6zu %10.2f %10.2f %10.2f %10.2f %10.2f | %8.2f %8.2f %8.2f\n", shape.name,
                  f.tasks, s * 1e3, median(f.serial) * 1e3, median(f.tbb) * 1e3, ideal * 1e3,
                  f.critical_path * 1e3, s / ideal, s / median(f.tbb), s / median(f.serial));
      std::printf(
          "  mean kernel %.1f us; ideal on the chip's compute cores would be "
          "total/24 = %.2f ms, but the simulated cores share %u hardware threads\n",
          f.total_kernel / f.tasks * 1e6, f.total_kernel / 24 * 1e3, workers);
      std::printf("  threads busy on average (CPU time / wall time): simpler %.2f, tbb %.2f\n",
                  median(f.simpler_cpu) / s, median(f.tbb_cpu) / median(f.tbb));
    }
    const Shape loop{"decode loop, one run per token", 32, 1, 64};
    const StepFigures steps = measure_steps(loop, program, rounds);
    const double one = median(steps.unpipelined), two = median(steps.pipelined);
    std::printf(
        "%s (%lld runs): depth 1 %.2f ms, depth 2 %.2f ms: pipelined throughput %.2fx; the "
        "orchestration is %.0f%% of an unpipelined step\n",
        loop.name, static_cast<long long>(loop.tokens), one * 1e3, two * 1e3, one / two,
        steps.orchestration_share * 100);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scene_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
