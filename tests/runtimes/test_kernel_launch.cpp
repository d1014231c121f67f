// Kernel mode with real programs (TMR): launches on the caller's stream, what a launch
// may and may not do, refusals that enqueue nothing, errors reported on the stream,
// finalize refusing while launches are unfinished, and the arena limits.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "abi_test_support.h"
#include "program_catalog.h"

namespace simpler::test {
namespace {

namespace programs = simpler::test_programs;
constexpr size_t kN = 16384;
constexpr size_t kBytes = kN * sizeof(float);

class KernelLaunch : public AbiTest {
 protected:
  void SetUp() override {
    AbiTest::SetUp();
    ctx_ = std::make_unique<Context>(tmr);
    SimplerCallConfig config = default_config();
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_init(*ctx_, 0, nullptr, 0, nullptr, 0, &config, 42));
    ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&stream_));
  }
  void TearDown() override {
    if (stream_ != nullptr) {
      EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(stream_));
    }
    ctx_.reset();
    AbiTest::TearDown();
  }
  SimplerDeviceContext* ctx() const { return ctx_->get(); }

  int64_t prepare(const ChipCallable& callable) {
    std::vector<uint8_t> image = image_of(callable);
    int64_t id = -1;
    EXPECT_STATUS(SIMPLER_OK, tmr.kernel_prepare(ctx(), image.data(), image.size(), &id))
        << last_error(tmr, ctx());
    return id;
  }
  static ChipStorageTaskArgs add_scalar_args(const DeviceBuffer& x, const DeviceBuffer& y,
                                             float s) {
    ChipStorageTaskArgs args{};
    args_add_tensor(args, x.f32({int64_t{kN}}));
    args_add_tensor(args, y.f32({int64_t{kN}}));
    args_add_scalar(args, scalar_bits_from_f32(s));
    return args;
  }
  static std::vector<float> download(const DeviceBuffer& b) {
    std::vector<float> v(kN);
    b.download(v.data(), kBytes);
    return v;
  }

  const RuntimeAbi& tmr = tmr_library().abi();
  std::unique_ptr<Context> ctx_;
  sim_stream_t stream_ = nullptr;
};

TEST_F(KernelLaunch, TwoLaunchesOnTheCallersStreamAreExactAndTakeNothing) {
  const int64_t id = prepare(programs::add_scalar());
  ASSERT_EQ(id, 0);
  std::vector<float> host_x(kN);
  for (size_t i = 0; i < kN; ++i) host_x[i] = static_cast<float>(i) * 0.5f;
  DeviceBuffer x(kBytes), y1(kBytes), y2(kBytes);
  x.upload(host_x.data(), kBytes);
  const uint64_t committed_before = committed(tmr, ctx());
  EXPECT_GT(committed_before, 0u);

  sim_reset_counters();
  ChipStorageTaskArgs args = add_scalar_args(x, y1, 1.5f);
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_)) << last_error(tmr, ctx());
  std::memset(&args, 0, sizeof args);  // the caller may clear its args at once
  args = add_scalar_args(x, y2, -3.0f);
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_));
  EXPECT_EQ(call_count("launch"), 2u);
  for (const char* op :
       {"malloc", "free", "stream_create", "stream_destroy", "event_create", "stream_synchronize",
        "event_synchronize", "set_device", "device_reset", "memcpy"}) {
    EXPECT_EQ(call_count(op), 0u) << op;
  }
  EXPECT_EQ(committed(tmr, ctx()), committed_before);
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  const std::vector<float> out1 = download(y1), out2 = download(y2);
  for (size_t i = 0; i < kN; ++i) {
    ASSERT_EQ(out1[i], host_x[i] + 1.5f) << i;
    ASSERT_EQ(out2[i], host_x[i] - 3.0f) << i;
  }
  ASSERT_STATUS(SIMPLER_OK, tmr.finalize(ctx()));
  EXPECT_EQ(committed(tmr, ctx()), 0u);
  EXPECT_EQ(call_count("stream_synchronize"), 1u);  // only ours
  EXPECT_EQ(call_count("device_reset"), 0u);
  EXPECT_EQ(call_count("set_device"), 0u);
  EXPECT_EQ(download(y1), out1);  // caller tensors untouched by finalize
}

TEST_F(KernelLaunch, TheSameImagePreparedTwiceGivesTwoIdsThatBothWork) {
  std::vector<uint8_t> image = image_of(programs::add_scalar());
  const uint64_t before = committed(tmr, ctx());
  int64_t first = -1, second = -1;
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_prepare(ctx(), image.data(), image.size(), &first));
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_prepare(ctx(), image.data(), image.size(), &second));
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
  EXPECT_EQ(committed(tmr, ctx()), before);  // uploads land in the arena committed at init
  std::vector<float> host_x(kN, 2.0f);
  DeviceBuffer x(kBytes), y1(kBytes), y2(kBytes);
  x.upload(host_x.data(), kBytes);
  ChipStorageTaskArgs args = add_scalar_args(x, y2, 5.0f);
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), second, &args, stream_));  // second first
  args = add_scalar_args(x, y1, 1.0f);
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), first, &args, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  EXPECT_EQ(download(y1), std::vector<float>(kN, 3.0f));
  EXPECT_EQ(download(y2), std::vector<float>(kN, 7.0f));
}

TEST_F(KernelLaunch, RefusedLaunchesEnqueueNothing) {
  const int64_t id = prepare(programs::add_scalar());
  DeviceBuffer x(kBytes), y(kBytes);
  std::vector<float> host_x(kN, 1.0f), host(kN, 0.0f);
  x.upload(host_x.data(), kBytes);
  sim_reset_counters();
  auto refused = [&](ChipStorageTaskArgs args, const char* needle) {
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx(), id, &args, stream_));
    EXPECT_NE(last_error(tmr, ctx()).find(needle), std::string::npos) << last_error(tmr, ctx());
  };
  ChipStorageTaskArgs args = add_scalar_args(x, y, 1.0f);
  ChipStorageTaskArgs no_scalar = args;
  no_scalar.scalar_count = 0;
  refused(no_scalar, "signature has 3 arguments");
  ChipStorageTaskArgs host_tensor = args;
  host_tensor.tensors[1] = host_f32(host);
  refused(host_tensor, "HOST-space tensor");
  ChipStorageTaskArgs three_tensors{};
  args_add_tensor(three_tensors, x.f32({int64_t{kN}}));
  args_add_tensor(three_tensors, y.f32({int64_t{kN}}));
  args_add_tensor(three_tensors, y.f32({int64_t{kN}}));
  refused(three_tensors, "argument 2");
  ChipStorageTaskArgs too_long = args;
  too_long.tensors[0] = f32_tensor(x.addr(), {int64_t{kN} + 1}, AddressSpace::DEVICE);
  too_long.tensors[0].buffer.size += sizeof(float);
  refused(too_long, "not inside one live device allocation");
  // A stream of another device.
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(1));
  sim_stream_t other = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&other));
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx(), id, &args, other));
  EXPECT_NE(last_error(tmr, ctx()).find("stream"), std::string::npos);
  EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(other));
  // Ids: never minted, out of range.
  EXPECT_STATUS(PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT,
                tmr.kernel_launch(ctx(), id + 1, &args, stream_));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx(), 100000, &args, stream_));
  EXPECT_EQ(call_count("launch"), 0u);
  EXPECT_STATUS(SIMPLER_OK, sim_stream_query(stream_));
  // A valid launch afterwards is correct.
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  EXPECT_EQ(download(y), std::vector<float>(kN, 2.0f));
}

// The context remembers the last stream it found live on its device (launch fast path):
// a stream destroyed after a launch on it is still refused, with the same message.
TEST_F(KernelLaunch, AStreamDestroyedAfterALaunchIsRefused) {
  const int64_t id = prepare(programs::add_scalar());
  DeviceBuffer x(kBytes), y(kBytes);
  ChipStorageTaskArgs args = add_scalar_args(x, y, 1.0f);
  sim_stream_t used = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&used));
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, used)) << last_error(tmr, ctx());
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(used));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_destroy(used));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx(), id, &args, used));
  EXPECT_NE(last_error(tmr, ctx()).find("stream: not a live sim stream"), std::string::npos)
      << last_error(tmr, ctx());
  // The context is still usable on a live stream.
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
}

// A launch with the tensors of the callable's previous checked launch skips the argument
// checks only while the device's memory is unchanged (CheckedArgs): after a free (also a
// stream-ordered one) the same args are refused again, before anything is enqueued.
TEST_F(KernelLaunch, TheSameArgsAreCheckedAgainAfterAFree) {
  const int64_t id = prepare(programs::add_scalar());
  DeviceBuffer x(kBytes);
  void* y = nullptr;
  void* z = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_malloc(&y, kBytes));
  ASSERT_STATUS(SIMPLER_OK, sim_malloc(&z, kBytes));
  ChipStorageTaskArgs args{};
  args_add_tensor(args, x.f32({int64_t{kN}}));
  args_add_tensor(args,
                  f32_tensor(reinterpret_cast<uint64_t>(y), {int64_t{kN}}, AddressSpace::DEVICE));
  args_add_scalar(args, scalar_bits_from_f32(1.0f));
  ChipStorageTaskArgs into_z = args;
  into_z.tensors[1].buffer.addr = reinterpret_cast<uint64_t>(z);
  for (int i = 0; i < 2; ++i) {
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_))
        << last_error(tmr, ctx());
  }
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &into_z, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  // A plain free of y: the remembered args name freed memory.
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_free(y));
  sim_reset_counters();
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx(), id, &args, stream_));
  EXPECT_NE(last_error(tmr, ctx()).find("argument 1"), std::string::npos) << last_error(tmr, ctx());
  EXPECT_NE(last_error(tmr, ctx()).find("not inside one live device allocation"),
            std::string::npos);
  EXPECT_EQ(call_count("launch"), 0u);
  // A stream-ordered free of z (the stream still runs earlier work): refused at once too.
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &into_z, stream_));
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &into_z, stream_));
  std::atomic<bool> open{false};
  ASSERT_STATUS(SIMPLER_OK, sim_launch_host_func(
                                stream_,
                                [](void* flag) {
                                  auto* f = static_cast<std::atomic<bool>*>(flag);
                                  while (!f->load()) std::this_thread::yield();
                                },
                                &open));
  ASSERT_STATUS(SIMPLER_OK, sim_free(z));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx(), id, &into_z, stream_));
  EXPECT_EQ(call_count("launch"), 2u);
  open.store(true);
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
}

// A device reset after launches whose args were remembered: the next launch with the same
// args is refused INVALID_STATE (the context's arena is gone), and finalize still works.
TEST_F(KernelLaunch, ALaunchAfterADeviceResetIsRefusedEvenWithRememberedArgs) {
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(2));
  Context other(tmr);
  SimplerCallConfig config = default_config();
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_init(other, 2, nullptr, 0, nullptr, 0, &config, 43))
      << last_error(tmr, other);
  std::vector<uint8_t> image = image_of(programs::add_scalar());
  int64_t id = -1;
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_prepare(other, image.data(), image.size(), &id));
  sim_stream_t stream = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&stream));
  void* x = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_malloc(&x, kBytes));
  ChipStorageTaskArgs args{};
  const auto addr = reinterpret_cast<uint64_t>(x);
  args_add_tensor(args, f32_tensor(addr, {int64_t{kN}}, AddressSpace::DEVICE));
  args_add_tensor(args, f32_tensor(addr, {int64_t{kN}}, AddressSpace::DEVICE));
  args_add_scalar(args, scalar_bits_from_f32(1.0f));
  for (int i = 0; i < 2; ++i) {
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(other, id, &args, stream))
        << last_error(tmr, other);
  }
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream));
  ASSERT_STATUS(SIMPLER_OK, sim_device_reset(2));  // frees x, destroys the stream
  ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.kernel_launch(other, id, &args, stream));
  EXPECT_NE(last_error(tmr, other).find("was reset"), std::string::npos) << last_error(tmr, other);
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(other));
  EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(stream));
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
}

TEST_F(KernelLaunch, AFailureDuringExecutionIsReportedOnTheCallersStream) {
  const int64_t id = prepare(programs::kernel_fault());
  DeviceBuffer x(16 * sizeof(float));
  ChipStorageTaskArgs args{};
  args_add_tensor(args, x.f32({16}));
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_));  // enqueued fine
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_synchronize(stream_));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_query(stream_));  // sticky, named
  // The asynchronous failure's message is the context's launch error, not a call's.
  SimplerKernelModeLaunchErrorArgs launch_error{.struct_size = sizeof launch_error, .ctx = ctx()};
  ASSERT_STATUS(SIMPLER_OK, tmr.table().kernel_mode_launch_error(&launch_error));
  EXPECT_NE(std::string(launch_error.message).find("SIMPLER_CHIP_ERR_KERNEL_FAULT"),
            std::string::npos)
      << launch_error.message;
  // The failed stream skips later launches; their records still come back, so the
  // context closes.
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_synchronize(stream_));
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(ctx()));
  EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(stream_));
  stream_ = nullptr;
}

// docs/runtime-abi.md: a struct_size that does not cover an entry's 2.0 fields is
// INVALID_ARGUMENT naming struct_size, before anything is read, minted or enqueued; the
// build writes nothing past struct_size (each out field below lies past it).
TEST_F(KernelLaunch, KernelEntriesRefuseAShortStructAndWriteNothingPastIt) {
  const SimplerApi& api = tmr.table();
  std::vector<uint8_t> image = image_of(programs::add_scalar());
  SimplerKernelModePrepareCallableArgs prepare_args{
      .struct_size = SIMPLER_KERNEL_MODE_PREPARE_CALLABLE_ARGS_STRUCT_SIZE - 1,
      .ctx = ctx(),
      .image = image.data(),
      .size = image.size(),
      .callable_id = 1234};
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, api.kernel_mode_prepare_callable(&prepare_args));
  EXPECT_NE(last_error(tmr, ctx()).find("struct_size"), std::string::npos)
      << last_error(tmr, ctx());
  EXPECT_EQ(prepare_args.callable_id, 1234);
  const int64_t id = prepare(programs::add_scalar());
  EXPECT_EQ(id, 0);  // the refused prepare minted nothing

  DeviceBuffer x(kBytes), y(kBytes);
  const ChipStorageTaskArgs args = add_scalar_args(x, y, 1.0f);
  sim_reset_counters();
  SimplerKernelModeLaunchArgs launch_args{
      .struct_size = SIMPLER_KERNEL_MODE_LAUNCH_ARGS_STRUCT_SIZE - 1,
      .ctx = ctx(),
      .callable_id = id,
      .args = &args,
      .stream = stream_};
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, api.kernel_mode_launch(&launch_args));
  EXPECT_EQ(call_count("launch"), 0u);

  const char sentinel[] = "untouched";
  SimplerKernelModeLaunchErrorArgs error_args{
      .struct_size = SIMPLER_KERNEL_MODE_LAUNCH_ERROR_ARGS_STRUCT_SIZE - 1,
      .ctx = ctx(),
      .message = sentinel};
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, api.kernel_mode_launch_error(&error_args));
  EXPECT_EQ(error_args.message, sentinel);
  SimplerKernelModeSupportedArgs supported_args{
      .struct_size = SIMPLER_KERNEL_MODE_SUPPORTED_ARGS_STRUCT_SIZE - 1,
      .ctx = ctx(),
      .supported = true};
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, api.kernel_mode_supported(&supported_args));
  EXPECT_TRUE(supported_args.supported);

  Context fresh(tmr);
  SimplerCallConfig config = default_config();
  SimplerKernelModeInitArgs init_args{.struct_size = SIMPLER_KERNEL_MODE_INIT_ARGS_STRUCT_SIZE - 1,
                                      .ctx = fresh.get(),
                                      .device_id = 1,
                                      .config = &config,
                                      .generation = 9};
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(1));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, api.kernel_mode_init(&init_args));
  EXPECT_EQ(committed(tmr, fresh.get()), 0u);  // nothing taken: still fresh
  init_args.struct_size = sizeof init_args;
  EXPECT_STATUS(SIMPLER_OK, api.kernel_mode_init(&init_args)) << last_error(tmr, fresh.get());
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(fresh.get()));
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
}

// The calling thread's current device is the caller's: a prepare or launch from a thread
// with none leaves it with none, and one with another device keeps it, switching nothing
// while the upload fits the arena's current block.
TEST_F(KernelLaunch, PrepareAndLaunchFromOtherThreadsLeaveTheirCurrentDeviceAlone) {
  DeviceBuffer x(kBytes), y(kBytes);
  const std::vector<float> zeros(kN, 0.0f);
  x.upload(zeros.data(), kBytes);
  const ChipStorageTaskArgs args = add_scalar_args(x, y, 1.0f);
  std::vector<uint8_t> image = image_of(programs::add_scalar());
  sim_reset_counters();
  for (int32_t device : {-1, 1}) {
    std::thread([&] {
      if (device >= 0) {
        ASSERT_STATUS(SIMPLER_OK, sim_set_device(device));
      }
      int64_t id = -1;
      ASSERT_STATUS(SIMPLER_OK, tmr.kernel_prepare(ctx(), image.data(), image.size(), &id))
          << last_error(tmr, ctx());
      ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_))
          << last_error(tmr, ctx());
      int32_t current = -1;
      if (device < 0) {
        EXPECT_STATUS(SIM_ERR_NO_DEVICE, sim_get_device(&current)) << "device " << current;
      } else {
        ASSERT_STATUS(SIMPLER_OK, sim_get_device(&current));
        EXPECT_EQ(current, device);
      }
    }).join();
  }
  EXPECT_EQ(call_count("set_device"), 1u);  // the test's own
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  EXPECT_EQ(download(y), std::vector<float>(kN, 1.0f));
}

// A kernel writing just past its cluster buffer crashes (docs/kernels.md): through the C
// ABI the caller's stream reports KERNEL_FAULT by name, the launch error names the
// SIGSEGV, the context is failed sticky (a later launch is refused with the same named
// status, nothing enqueued), and finalize_device still releases everything.
TEST_F(KernelLaunch, AClusterBufferOverrunLeavesTheContextFailedWithANamedKernelFault) {
  const int64_t id = prepare(programs::cluster());
  DeviceBuffer x(64 * sizeof(float)), y(64 * sizeof(float));
  ChipStorageTaskArgs args{};
  args_add_tensor(args, x.f32({64}));
  args_add_tensor(args, y.f32({64}));
  args_add_scalar(args, 1);  // block_num: one cluster
  args_add_scalar(args, 5);  // mode 5: the AIC part writes the byte past the buffer's end
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_)) << last_error(tmr, ctx());
  const int sync = sim_stream_synchronize(stream_);
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sync);
  EXPECT_STREQ(simpler_status_name(sync), "SIMPLER_CHIP_ERR_KERNEL_FAULT");
  SimplerKernelModeLaunchErrorArgs launch_error{.struct_size = sizeof launch_error, .ctx = ctx()};
  ASSERT_STATUS(SIMPLER_OK, tmr.table().kernel_mode_launch_error(&launch_error));
  const std::string message = launch_error.message;
  EXPECT_NE(message.find("crashed with SIGSEGV"), std::string::npos) << message;
  EXPECT_NE(message.find("[SIMPLER_CHIP_ERR_KERNEL_FAULT]"), std::string::npos) << message;

  sim_reset_counters();
  args.scalars[1] = 0;  // a valid exchange: still refused, the context failed
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, tmr.kernel_launch(ctx(), id, &args, stream_));
  EXPECT_NE(last_error(tmr, ctx()).find("failed earlier"), std::string::npos)
      << last_error(tmr, ctx());
  EXPECT_EQ(call_count("launch"), 0u);
  ASSERT_STATUS(SIMPLER_OK, tmr.finalize(ctx()));
  EXPECT_EQ(committed(tmr, ctx()), 0u);
}

TEST_F(KernelLaunch, FinalizeIsRefusedWhileLaunchesAreUnfinished) {
  const int64_t id = prepare(programs::sleep());
  DeviceBuffer x(2 * sizeof(float));
  const float init[2] = {1.0f, 0.0f};
  x.upload(init, sizeof init);
  ChipStorageTaskArgs args{};
  args_add_tensor(args, x.f32({2}));
  args_add_scalar(args, 300);
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_));
  const uint64_t bytes = committed(tmr, ctx());
  sim_reset_counters();
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.finalize(ctx()));
  EXPECT_NE(last_error(tmr, ctx()).find("busy"), std::string::npos) << last_error(tmr, ctx());
  EXPECT_EQ(committed(tmr, ctx()), bytes);  // nothing freed
  EXPECT_EQ(call_count("stream_synchronize"), 0u);
  EXPECT_EQ(call_count("free"), 0u);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.destroy(ctx()));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(ctx()));
  float out[2] = {};
  x.download(out, sizeof out);
  EXPECT_EQ(out[0], 2.0f);
}

TEST_F(KernelLaunch, MoreLaunchesInFlightThanThePoolHeldAreAllExecuted) {
  const int64_t sleep_id = prepare(programs::sleep());
  const int64_t add_id = prepare(programs::add_scalar());
  DeviceBuffer gate(2 * sizeof(float)), x(kBytes);
  std::vector<float> host_x(kN, 1.0f);
  x.upload(host_x.data(), kBytes);
  ChipStorageTaskArgs hold{};
  args_add_tensor(hold, gate.f32({2}));
  args_add_scalar(hold, 100);
  ASSERT_STATUS(SIMPLER_OK,
                tmr.kernel_launch(ctx(), sleep_id, &hold, stream_));  // keeps the others queued
  constexpr int kLaunches = 80;
  std::vector<std::unique_ptr<DeviceBuffer>> outputs;
  for (int i = 0; i < kLaunches; ++i) {
    outputs.push_back(std::make_unique<DeviceBuffer>(kBytes));
    ChipStorageTaskArgs args = add_scalar_args(x, *outputs.back(), static_cast<float>(i));
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), add_id, &args, stream_));
  }
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  for (int i = 0; i < kLaunches; ++i) {
    const std::vector<float> out = download(*outputs[i]);
    ASSERT_EQ(out.front(), 1.0f + i);
    ASSERT_EQ(out.back(), 1.0f + i);
  }
}

TEST_F(KernelLaunch, ArenaLimitsKeepExistingResidents) {
  std::vector<uint8_t> image = image_of(programs::add_scalar());
  // A second context whose arena holds exactly two images.
  ctx_.reset();
  const std::string arena = std::to_string(2 * image.size() + 64);
  ASSERT_EQ(setenv("SIMPLER_KERNEL_CODE_ARENA_BYTES", arena.c_str(), 1), 0);
  ctx_ = std::make_unique<Context>(tmr);
  SimplerCallConfig config = default_config();
  const int status = tmr.kernel_init(*ctx_, 0, nullptr, 0, nullptr, 0, &config, 43);
  unsetenv("SIMPLER_KERNEL_CODE_ARENA_BYTES");
  ASSERT_STATUS(SIMPLER_OK, status);
  EXPECT_EQ(prepare(programs::add_scalar()), 0);
  EXPECT_EQ(prepare(programs::add_scalar()), 1);
  int64_t id = 9;
  EXPECT_STATUS(PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED,
                tmr.kernel_prepare(ctx(), image.data(), image.size(), &id));
  EXPECT_EQ(id, -1);
  DeviceBuffer x(kBytes), y(kBytes);
  std::vector<float> host_x(kN, 4.0f);
  x.upload(host_x.data(), kBytes);
  ChipStorageTaskArgs args = add_scalar_args(x, y, 1.0f);
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), 1, &args, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  EXPECT_EQ(download(y), std::vector<float>(kN, 5.0f));
}

// A context holds 8,192 callables; the code arena grows block by block as they arrive.
TEST_F(KernelLaunch, CallableCountLimitKeepsExistingResidents) {
  std::vector<uint8_t> image = image_of(programs::add_scalar());
  const uint64_t committed_at_init = committed(tmr, ctx());
  int64_t id = -1;
  for (int64_t i = 0; i < 8192; ++i) {
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_prepare(ctx(), image.data(), image.size(), &id)) << i;
    ASSERT_EQ(id, i);
  }
  // Every image has a slot in the arena; the first block (KernelLimits::kArenaBlockBytes,
  // 4 MiB) was committed at init and holds the first of them, so the growth since init is
  // at least all images less that block (a sanitizer's larger images leave less slack).
  constexpr uint64_t kFirstArenaBlock = uint64_t{4} << 20;
  EXPECT_GE(committed(tmr, ctx()) + kFirstArenaBlock, committed_at_init + 8192 * image.size());
  EXPECT_STATUS(PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED,
                tmr.kernel_prepare(ctx(), image.data(), image.size(), &id));
  EXPECT_EQ(id, -1);
  DeviceBuffer x(kBytes), y(kBytes);
  std::vector<float> host_x(kN, 1.0f);
  x.upload(host_x.data(), kBytes);
  ChipStorageTaskArgs args = add_scalar_args(x, y, 2.0f);
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), 0, &args, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  EXPECT_EQ(download(y), std::vector<float>(kN, 3.0f));
  ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), 8191, &args, stream_));
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  EXPECT_EQ(download(y), std::vector<float>(kN, 3.0f));
}

}  // namespace
}  // namespace simpler::test

namespace simpler::test {
namespace {

// More tensors and scalars than a launch record holds inline: the args must still arrive
// intact, also when the caller clears them right after launch and launches again.
TEST_F(KernelLaunch, LaunchesWithManyArgsArriveIntact) {
  const int64_t id = prepare(programs::many_args());
  ASSERT_GE(id, 0);
  std::vector<std::unique_ptr<DeviceBuffer>> first, second;
  auto launch = [&](std::vector<std::unique_ptr<DeviceBuffer>>& xs, int64_t scalar_base) {
    ChipStorageTaskArgs args{};
    for (int i = 0; i < 6; ++i) {
      xs.push_back(std::make_unique<DeviceBuffer>(64 * sizeof(float)));
      args_add_tensor(args, xs.back()->f32({64}));
    }
    for (int64_t s = 0; s < 10; ++s) args_add_scalar(args, scalar_bits_from_i64(scalar_base + s));
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_launch(ctx(), id, &args, stream_))
        << last_error(tmr, ctx());
    std::memset(&args, 0, sizeof args);
  };
  launch(first, 0);     // sum 45
  launch(second, 100);  // sum 1045
  ASSERT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream_));
  for (int i = 0; i < 6; ++i) {
    float v = 0.0f;
    first[i]->download(&v, sizeof v);
    EXPECT_EQ(v, 45.0f + static_cast<float>(i)) << "first launch, tensor " << i;
    second[i]->download(&v, sizeof v);
    EXPECT_EQ(v, 1045.0f + static_cast<float>(i)) << "second launch, tensor " << i;
  }
}

// A launch's args travel in a pooled record (copied at launch, expanded by the executor):
// what the chip program receives is exactly what was launched, for every rank, also for
// a record reused by launches of other ranks, whatever the caller does with its args.
TEST_F(KernelLaunch, PackedArgsArriveWithEveryRankShapeAndStride) {
  char dir_template[] = "/tmp/simpler-packed-args-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::vector<std::vector<int64_t>> shapes = {
      {int64_t{kN}}, {2, 2, 4, 32, 32}, {128, 128}, {4, 4, 4, 16, 16}, {int64_t{kN}}};
  const std::vector<std::string> expected = {
      "shape=(16384) strides=(1)", "shape=(2,2,4,32,32) strides=(8192,4096,1024,32,1)",
      "shape=(128,128) strides=(128,1)", "shape=(4,4,4,16,16) strides=(4096,1024,256,16,1)",
      "shape=(16384) strides=(1)"};
  // A second context, on device 1, whose launches dump their entry args.
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(1));
  std::vector<std::string> dumps;
  std::vector<float> out(kN);
  {
    Context dumping(tmr);
    SimplerCallConfig config = default_config();
    config.flags = SIMPLER_CFG_DUMP_ARGS;
    std::snprintf(config.output_prefix, sizeof config.output_prefix, "%s", dir.c_str());
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_init(dumping, 1, nullptr, 0, nullptr, 0, &config, 43))
        << last_error(tmr, dumping);
    sim_stream_t stream = nullptr;
    ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&stream));
    std::vector<uint8_t> image = image_of(programs::add_scalar());
    int64_t id = -1;
    ASSERT_STATUS(SIMPLER_OK, tmr.kernel_prepare(dumping, image.data(), image.size(), &id));
    DeviceBuffer x(kBytes), y(kBytes);
    std::vector<float> ones(kN, 1.0f);
    x.upload(ones.data(), kBytes);
    for (const auto& shape : shapes) {
      ChipStorageTaskArgs args{};
      args_add_tensor(args, x.f32(shape));
      args_add_tensor(args, y.f32(shape));  // the kernel takes x and y of one shape
      args_add_scalar(args, scalar_bits_from_f32(2.0f));
      EXPECT_STATUS(SIMPLER_OK, tmr.kernel_launch(dumping, id, &args, stream))
          << last_error(tmr, dumping);
      std::memset(&args, 0xff, sizeof args);  // the caller may reuse its args at once
    }
    EXPECT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream));
    y.download(out.data(), kBytes);
    for (size_t n = 1; n <= shapes.size(); ++n) {
      std::ifstream in(dir + "/launch-00000" + std::to_string(n) + ".args.txt");
      std::stringstream text;
      text << in.rdbuf();
      dumps.push_back(text.str());
    }
    EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(stream));
  }
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
  std::filesystem::remove_all(dir);
  EXPECT_EQ(out.front(), 3.0f);
  EXPECT_EQ(out.back(), 3.0f);
  ASSERT_EQ(dumps.size(), expected.size());
  for (size_t i = 0; i < dumps.size(); ++i) {
    const std::string& d = dumps[i];
    const size_t in = d.find("[0] IN");
    const size_t out_at = d.find("[1] OUT");
    ASSERT_NE(in, std::string::npos) << d;
    ASSERT_NE(out_at, std::string::npos) << d;
    EXPECT_NE(d.find(expected[i], in), std::string::npos) << "launch " << i << ": " << d;
    EXPECT_NE(d.find(expected[i], out_at), std::string::npos) << "launch " << i << ": " << d;
    EXPECT_NE(d.find("scalars 1\n  [0] 0x40000000"), std::string::npos) << d;
  }
}

}  // namespace
}  // namespace simpler::test
