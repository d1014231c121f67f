#include "recorded_program.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "simpler/kernel/kernel_abi.h"
#include "simpler/task/task_interface.h"

namespace simpler::bench {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Recorder {
  std::vector<RecordedTask>* tasks;
  std::vector<std::unique_ptr<uint8_t[]>>* arena;

  ChipTensor allocate(uint32_t ndims, const int64_t* shapes, uint32_t dtype) {
    int64_t numel = 1;
    for (uint32_t i = 0; i < ndims; ++i) numel *= shapes[i];
    const size_t bytes = static_cast<size_t>(numel) * element_size(static_cast<DataType>(dtype));
    arena->push_back(std::make_unique<uint8_t[]>(bytes + 64));
    return make_tensor(reinterpret_cast<uint64_t>(arena->back().get()),
                       std::span<const int64_t>(shapes, ndims), static_cast<DataType>(dtype),
                       AddressSpace::DEVICE);
  }
};

int record_submit(void* rt, const SimplerTaskDesc* desc, SimplerTaskResult* out) {
  auto* rec = static_cast<Recorder*>(rt);
  if (desc->tensor_count > CHIP_MAX_TENSOR_ARGS || desc->scalar_count > CHIP_MAX_SCALAR_ARGS)
    return -1;
  RecordedTask task;
  task.func_id = desc->func_id;
  task.core_type = desc->core_type;
  task.block_num = desc->block_num;
  if (out != nullptr) *out = SimplerTaskResult{};
  for (uint32_t i = 0; i < desc->tensor_count; ++i) {
    ChipTensor t = desc->tensors[i].tensor;
    uint32_t mode = desc->tensors[i].mode;
    if (mode == SIMPLER_TENSOR_OUT_ALLOC) {
      t = rec->allocate(t.ndims, t.shapes, t.dtype);
      mode = SIMPLER_TENSOR_OUT;
      if (out != nullptr) out->outputs[out->output_count++] = t;
    }
    task.tensors.push_back(t);
    task.modes.push_back(mode);
  }
  task.scalars.assign(desc->scalars, desc->scalars + desc->scalar_count);
  if (out != nullptr) out->task_id = rec->tasks->size();
  rec->tasks->push_back(std::move(task));
  return 0;
}

int record_scope(void*) { return 0; }

int record_alloc(void* rt, uint32_t ndims, const int64_t* shapes, uint32_t dtype, ChipTensor* out) {
  *out = static_cast<Recorder*>(rt)->allocate(ndims, shapes, dtype);
  return 0;
}

int record_dependency(void* rt, uint64_t before, uint64_t after) {
  auto* rec = static_cast<Recorder*>(rt);
  if (after >= rec->tasks->size() || before >= after) return -1;
  (*rec->tasks)[after].after.push_back(static_cast<uint32_t>(before));
  return 0;
}

// Values would need the tasks to have run: the recorded programs do not use them.
int record_read_value(void*, const ChipTensor*, int64_t, void*, size_t) { return -1; }
int record_write_value(void*, const ChipTensor*, int64_t, const void*, size_t) { return -1; }
int record_fatal(void*, const char* message) { throw std::runtime_error(message); }
void record_log(void*, int32_t, const char*) {}

}  // namespace

RecordedProgram::RecordedProgram(std::span<const uint8_t> image) {
  ChipCallableView view;
  std::string error;
  if (!parse_chip_callable_image(image.data(), image.size(), &view, &error))
    throw std::runtime_error("chip callable image: " + error);
  if (!rt::SharedObject::load(view.binary, &orchestration_, &error))
    throw std::runtime_error("orchestration: " + error);
  const std::string name(view.func_name);
  entry_ = reinterpret_cast<simpler_orch_entry_fn>(orchestration_.symbol(name.c_str()));
  if (entry_ == nullptr) throw std::runtime_error("orchestration does not export " + name);
  for (const auto& child : view.children) {
    rt::SharedObject object;
    if (!rt::SharedObject::load(child.callable.binary, &object, &error))
      throw std::runtime_error("kernel " + std::to_string(child.func_id) + ": " + error);
    if (kernels_.size() <= static_cast<size_t>(child.func_id)) kernels_.resize(child.func_id + 1);
    kernels_[child.func_id] =
        reinterpret_cast<simpler_kernel_entry_fn>(object.symbol(SIMPLER_KERNEL_ENTRY_SYMBOL));
    kernel_objects_.push_back(std::move(object));
  }
}

std::vector<RecordedTask> RecordedProgram::record(const ChipStorageTaskArgs& args) {
  std::vector<RecordedTask> tasks;
  Recorder recorder{&tasks, &arena_};
  SimplerOrchApi api{};
  api.version = SIMPLER_ORCH_API_VERSION;
  api.struct_size = sizeof api;
  api.rt = &recorder;
  api.submit = record_submit;
  api.scope_begin = record_scope;
  api.scope_end = record_scope;
  api.alloc_tensor = record_alloc;
  api.add_dependency = record_dependency;
  api.read_value = record_read_value;
  api.write_value = record_write_value;
  api.fatal = record_fatal;
  api.log = record_log;
  if (entry_(&args, &api) != 0) throw std::runtime_error("the orchestration failed");
  return tasks;
}

double RecordedProgram::execute(const RecordedTask& task) const {
  const size_t id = static_cast<size_t>(task.func_id);
  if (id >= kernels_.size() || kernels_[id] == nullptr)
    throw std::runtime_error("no kernel for func id " + std::to_string(task.func_id));
  int32_t fault = 0;
  std::vector<int64_t> args(task.tensors.size() + task.scalars.size());
  for (size_t i = 0; i < task.tensors.size(); ++i)
    args[i] = reinterpret_cast<int64_t>(&task.tensors[i]);
  for (size_t i = 0; i < task.scalars.size(); ++i)
    args[task.tensors.size() + i] = static_cast<int64_t>(task.scalars[i]);
  double cpu = 0;
  if (task.core_type == SIMPLER_CORE_MIX) {
    std::unique_ptr<ClusterRunner> runner;
    {
      std::lock_guard<std::mutex> lock(runners_mutex_);
      if (!runners_.empty()) {
        runner = std::move(runners_.back());
        runners_.pop_back();
      }
    }
    if (!runner) runner = std::make_unique<ClusterRunner>();
    for (uint32_t block = 0; block < task.block_num; ++block)
      cpu += runner->run(kernels_[id], args, block, task.block_num, &fault);
    std::lock_guard<std::mutex> lock(runners_mutex_);
    runners_.push_back(std::move(runner));
  } else {
    const double start = thread_cpu_seconds();
    std::vector<int64_t> argv(1 + args.size());
    std::memcpy(argv.data() + 1, args.data(), args.size() * sizeof(int64_t));
    for (uint32_t block = 0; block < task.block_num; ++block) {
      SimplerKernelContext context{block, task.block_num, task.core_type, 0, &fault, nullptr};
      argv[0] = reinterpret_cast<int64_t>(&context);
      kernels_[id](argv.data() + 1);
    }
    cpu = thread_cpu_seconds() - start;
  }
  if (fault != 0) throw std::runtime_error("a kernel reported fault " + std::to_string(fault));
  return cpu;
}

std::vector<std::vector<uint32_t>> infer_predecessors(const std::vector<RecordedTask>& tasks) {
  struct Access {
    uint64_t first, last;
    uint32_t task;
    bool write;
  };
  // All accesses so far, by buffer; the programs here have a few thousand tasks, so a
  // linear scan per buffer is the plain, obviously-correct reference.
  std::map<uint64_t, std::vector<Access>> by_buffer;
  std::vector<std::vector<uint32_t>> predecessors(tasks.size());
  for (uint32_t t = 0; t < tasks.size(); ++t) {
    auto& preds = predecessors[t];
    preds = tasks[t].after;
    for (size_t i = 0; i < tasks[t].tensors.size(); ++i) {
      const uint32_t mode = tasks[t].modes[i];
      if (mode == SIMPLER_TENSOR_NODEP) continue;
      const ChipTensor& tensor = tasks[t].tensors[i];
      const auto [first, last] = tensor_byte_extent(tensor);
      const bool write = mode != SIMPLER_TENSOR_IN;
      auto& accesses = by_buffer[tensor.buffer.addr];
      for (const Access& a : accesses)
        if (a.task != t && a.first < last && first < a.last && (write || a.write))
          preds.push_back(a.task);  // RAW (we read, it wrote), WAW and WAR (we write)
      accesses.push_back({first, last, t, write});
    }
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  }
  return predecessors;
}

}  // namespace simpler::bench
