#include "launchers.h"

#include <dlfcn.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "simpler/abi/runtime_abi.h"
#include "simpler/task/task_interface.h"
#include "simpler/worker/chip_worker.h"
#include "simpler/worker/runtime_build.h"
#include "simpler/worker/worker.h"

namespace simpler::bench {
namespace {

constexpr int kTensors = 4;
constexpr int64_t kElements = 1024;

void check_sim(int status, const std::string& what) {
  if (status != SIMPLER_OK)
    throw std::runtime_error(what + " failed: " + simpler_status_name(status));
}

ChipCallable load_empty_program(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + " (build the bench targets first)");
  const std::vector<uint8_t> binary{std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>()};
  const ArgDirection signature[kTensors] = {ArgDirection::IN, ArgDirection::IN, ArgDirection::INOUT,
                                            ArgDirection::OUT};
  return ChipCallable::build(signature, "bench_empty", binary, {});
}

// Stream + 4 device tensors on one device; everything the "framework" owns.
class DeviceSide {
 public:
  explicit DeviceSide(int32_t device) : device_(device) {
    check_sim(sim_set_device(device), "sim_set_device(" + std::to_string(device) + ")");
    check_sim(sim_stream_create(&stream_), "sim_stream_create");
    for (int i = 0; i < kTensors; ++i) {
      void* p = nullptr;
      check_sim(sim_malloc(&p, kElements * sizeof(float)), "sim_malloc");
      buffers_.push_back(p);
      const int64_t shape[] = {kElements};
      args_add_tensor(args_, make_tensor(reinterpret_cast<uint64_t>(p), shape, DataType::FLOAT32,
                                         AddressSpace::DEVICE));
    }
  }
  ~DeviceSide() {
    sim_set_device(device_);
    for (void* p : buffers_) sim_free(p);
    if (stream_) sim_stream_destroy(stream_);
  }
  DeviceSide(const DeviceSide&) = delete;
  DeviceSide& operator=(const DeviceSide&) = delete;

  sim_stream_t stream() const { return stream_; }
  const ChipStorageTaskArgs& args() const { return args_; }
  int32_t device() const { return device_; }

 private:
  int32_t device_;
  sim_stream_t stream_ = nullptr;
  std::vector<void*> buffers_;
  ChipStorageTaskArgs args_{};
};

class WorkerLauncher final : public Launcher {
 public:
  WorkerLauncher(int32_t device, const ChipCallable& program)
      : side_(device), worker_(options(device)) {
    stream_ = side_.stream();
    worker_.init(std::nullopt, CallConfig{});
    id_ = worker_.kernel_prepare_callable(program);
  }
  ~WorkerLauncher() override {
    synchronize();
    try {
      worker_.close();
    } catch (const std::exception&) {
      // reported by the Worker's own destructor warning; nothing else to do in a bench
    }
  }
  const char* name() const override { return "C++ Worker::kernel_launch"; }
  void launch() override { worker_.kernel_launch(id_, side_.args(), side_.stream()); }

 private:
  static WorkerOptions options(int32_t device) {
    WorkerOptions o;
    o.device_id = device;
    o.execution_mode = "kernel";
    return o;
  }
  DeviceSide side_;
  Worker worker_;
  int64_t id_ = -1;
};

class ChipWorkerLauncher final : public Launcher {
 public:
  ChipWorkerLauncher(int32_t device, const ChipCallable& program) : side_(device) {
    stream_ = side_.stream();
    chip_.kernel_init(device, find_runtime_build("a2a3sim", "tensormap_and_ringbuffer"),
                      CallConfig{});
    id_ = chip_.kernel_prepare_callable(program);
  }
  ~ChipWorkerLauncher() override {
    synchronize();
    try {
      chip_.finalize();
    } catch (const std::exception&) {
    }
  }
  const char* name() const override { return "C++ ChipWorker::kernel_launch"; }
  void launch() override { chip_.kernel_launch(id_, side_.args(), side_.stream()); }

 private:
  DeviceSide side_;
  ChipWorker chip_;
  int64_t id_ = -1;
};

// The runtime build's C ABI v2 table, fetched through simpler_get_api like ChipWorker does.
class AbiLauncher final : public Launcher {
 public:
  AbiLauncher(int32_t device, const ChipCallable& program)
      : side_(device),
        lib_(find_runtime_build("a2a3sim", "tensormap_and_ringbuffer").host_lib_path) {
    stream_ = side_.stream();
    ctx_.bind(lib_.api);
    const SimplerCallConfig config = CallConfig{}.to_abi();
    // A generation far above what ChipWorker mints, so the two never collide.
    SimplerKernelModeInitArgs init{.struct_size = sizeof init,
                                   .ctx = ctx_.ctx,
                                   .device_id = device,
                                   .config = &config,
                                   .generation = (1ull << 62) + device};
    check(lib_.api->kernel_mode_init(&init), "kernel_mode_init");
    const auto bytes = program.bytes();
    SimplerKernelModePrepareCallableArgs prepare{.struct_size = sizeof prepare,
                                                 .ctx = ctx_.ctx,
                                                 .image = bytes.data(),
                                                 .size = bytes.size()};
    check(lib_.api->kernel_mode_prepare_callable(&prepare), "kernel_mode_prepare_callable");
    launch_args_ = SimplerKernelModeLaunchArgs{.struct_size = sizeof launch_args_,
                                               .ctx = ctx_.ctx,
                                               .callable_id = prepare.callable_id,
                                               .args = &side_.args(),
                                               .stream = side_.stream()};
  }
  ~AbiLauncher() override { synchronize(); }
  const char* name() const override { return "C ABI kernel_mode_launch"; }
  void launch() override {
    const int rc = lib_.api->kernel_mode_launch(&launch_args_);
    if (rc != 0) check(rc, "kernel_mode_launch");
  }

 private:
  static void check(int rc, const char* what) {
    if (rc != 0)
      throw std::runtime_error(std::string(what) + " failed: " + simpler_status_name(rc));
  }

  struct Library {
    void* handle;
    const SimplerApi* api = nullptr;
    explicit Library(const std::string& path)
        : handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (!handle) throw std::runtime_error(std::string("dlopen: ") + dlerror());
      auto get_api = reinterpret_cast<SimplerGetApiFn>(dlsym(handle, SIMPLER_GET_API_SYMBOL));
      if (!get_api) throw std::runtime_error("the runtime build lacks simpler_get_api");
      check(get_api(SIMPLER_API_MAJOR, SIMPLER_API_MINOR, &api, nullptr), "simpler_get_api");
    }
    ~Library() { dlclose(handle); }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
  };

  // The context; finalized and destroyed with the launcher.
  struct Context {
    SimplerDeviceContext* ctx = nullptr;
    const SimplerApi* api = nullptr;

    void bind(const SimplerApi* table) {
      api = table;
      SimplerContextCreateArgs create{.struct_size = sizeof create};
      check(api->context_create(&create), "context_create");
      ctx = create.ctx;
    }
    Context() = default;
    ~Context() {
      if (!ctx) return;
      SimplerFinalizeDeviceArgs finalize{.struct_size = sizeof finalize, .ctx = ctx};
      api->finalize_device(&finalize);
      SimplerContextDestroyArgs destroy{.struct_size = sizeof destroy, .ctx = ctx};
      api->context_destroy(&destroy);
    }
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
  };

  DeviceSide side_;
  Library lib_;
  Context ctx_;  // after lib_: released before the library is unloaded
  SimplerKernelModeLaunchArgs launch_args_{};
};

}  // namespace

void Launcher::synchronize() const {
  if (stream_) check_sim(sim_stream_synchronize(stream_), "sim_stream_synchronize");
}

std::unique_ptr<Launcher> make_launcher(LaunchPath path, int32_t device,
                                        const std::string& orchestration_path) {
  const ChipCallable program = load_empty_program(orchestration_path);
  switch (path) {
    case LaunchPath::WORKER:
      return std::make_unique<WorkerLauncher>(device, program);
    case LaunchPath::CHIP_WORKER:
      return std::make_unique<ChipWorkerLauncher>(device, program);
    case LaunchPath::C_ABI:
      return std::make_unique<AbiLauncher>(device, program);
  }
  throw std::invalid_argument("make_launcher: unknown path");
}

}  // namespace simpler::bench
