#include "simpler_patterns.h"

#include <chrono>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "engine/engine.h"
#include "patterns.h"
#include "simpler/sim/sim_driver.h"
#include "simpler/task/task_interface.h"

namespace simpler::bench {
namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + " (build the bench targets first)");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void check_sim(int status, const char* what) {
  if (status != SIMPLER_OK)
    throw std::runtime_error(std::string(what) + " failed: " + simpler_status_name(status));
}

// The slot buffer, freed with the runner.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes) { check_sim(sim_malloc(&ptr, bytes), "sim_malloc"); }
  ~DeviceBuffer() { sim_free(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace

struct SimplerPatternRunner::State {
  ChipCallable callable;
  std::unique_ptr<rt::LoadedProgram> program;
  std::unique_ptr<rt::Engine> engine;
  std::unique_ptr<DeviceBuffer> slots;
  uint64_t max_slots = 0;
};

SimplerPatternRunner::SimplerPatternRunner(const std::string& orchestration_path,
                                           const std::string& kernel_path, uint64_t max_slots)
    : state_(std::make_unique<State>()) {
  check_sim(sim_set_device(0), "sim_set_device(0)");
  const std::vector<uint8_t> kernel = read_file(kernel_path);
  const std::vector<uint8_t> orchestration = read_file(orchestration_path);
  // The same empty kernel under one func id per task shape (patterns.h).
  constexpr auto IN = ArgDirection::IN;
  constexpr auto OUT = ArgDirection::OUT;
  std::vector<std::pair<int32_t, std::vector<ArgDirection>>> shapes = {
      {BENCH_KERNEL_INOUT, {ArgDirection::INOUT}},
      {BENCH_KERNEL_OUT, {OUT}},
      {BENCH_KERNEL_OUT_IN1, {OUT, IN}},
      {BENCH_KERNEL_OUT_IN2, {OUT, IN, IN}},
      {BENCH_KERNEL_OUT_IN3, {OUT, IN, IN, IN}},
      {BENCH_KERNEL_IN8_OUT, {IN, IN, IN, IN, IN, IN, IN, IN, OUT}},
  };
  for (int k = 0; k <= BENCH_MAX_DEPS; ++k) {  // [OUT, IN x k]
    std::vector<ArgDirection> signature(1 + k, IN);
    signature[0] = OUT;
    shapes.emplace_back(BENCH_KERNEL_OUT_INK + k, signature);
  }
  std::vector<std::pair<int32_t, CoreCallable>> children;
  for (const auto& [func_id, signature] : shapes)
    children.emplace_back(func_id, CoreCallable::build(signature, kernel));
  const ArgDirection signature[] = {ArgDirection::INOUT,  ArgDirection::SCALAR,
                                    ArgDirection::SCALAR, ArgDirection::SCALAR,
                                    ArgDirection::SCALAR, ArgDirection::SCALAR};
  state_->callable = ChipCallable::build(signature, "bench_pattern", orchestration, children);

  std::string error;
  if (int rc = rt::LoadedProgram::load(state_->callable.view(), &state_->program, &error))
    throw std::runtime_error("LoadedProgram::load failed (" + std::to_string(rc) + "): " + error);
  rt::EngineOptions options;
  options.device = 0;
  options.config.struct_size = sizeof(SimplerCallConfig);
  if (int rc = rt::Engine::create(options, &state_->engine, &error))
    throw std::runtime_error("Engine::create failed (" + std::to_string(rc) + "): " + error);
  state_->slots = std::make_unique<DeviceBuffer>(max_slots * sizeof(float));
  state_->max_slots = max_slots;
}

SimplerPatternRunner::~SimplerPatternRunner() = default;

double SimplerPatternRunner::run(int pattern, uint64_t tasks, bool views, uint32_t k, bool scoped) {
  if (bench_pattern_slots(pattern, tasks) > state_->max_slots)
    throw std::runtime_error("SimplerPatternRunner::run: more tasks than the slot buffer holds");
  ChipStorageTaskArgs args{};
  const int64_t shape[] = {static_cast<int64_t>(state_->max_slots)};
  args_add_tensor(args, make_tensor(reinterpret_cast<uint64_t>(state_->slots->ptr), shape,
                                    DataType::FLOAT32, AddressSpace::DEVICE));
  args_add_scalar(args, static_cast<uint64_t>(pattern));
  args_add_scalar(args, tasks);
  args_add_scalar(args, views ? 1 : 0);
  args_add_scalar(args, k);
  args_add_scalar(args, scoped ? 1 : 0);
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  const int rc = state_->engine->execute(*state_->program, args, nullptr, &error);
  const auto stop = std::chrono::steady_clock::now();
  if (rc != 0)
    throw std::runtime_error("Engine::execute failed (" + std::to_string(rc) + "): " + error);
  return std::chrono::duration<double, std::nano>(stop - start).count();
}

}  // namespace simpler::bench
