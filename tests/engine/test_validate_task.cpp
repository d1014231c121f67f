// validate_task's quick path (Orchestrator::task_quick_ok, no messages) must never accept
// a task the full checks (check_task) refuse: random descriptors, each one or two fields
// away from a valid task, against random kernel signatures.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>

#include "engine/engine_defaults.h"
#include "engine/orchestrator.h"
#include "engine_test_support.h"
#include "test_orchestrator_sizes.h"

namespace simpler::rt {

namespace {
void empty_kernel(int64_t* /*args*/) {}
constexpr int32_t kFunc = 3;
}  // namespace

class ValidateTaskTest : public testing::EngineTest {
 protected:
  void SetUp() override {
    testing::EngineTest::SetUp();  // the device is current from here
    heap_ = std::make_unique<testing::DeviceBuffer>(1 << 16);
    x_ = std::make_unique<testing::DeviceBuffer>(4096);
    chip_.init_cores(2);
    orch_ = std::make_unique<Orchestrator>(chip_, testing::small_orchestrator_sizes(*heap_));
  }
  void begin(const LoadedProgram::Impl& program) { orch_->begin_run(program, RunOptions{}); }
  bool quick(const SimplerTaskDesc* d) { return orch_->task_quick_ok(d); }
  bool full(const SimplerTaskDesc* d) { return orch_->check_task(d); }

  std::unique_ptr<testing::DeviceBuffer> heap_;
  std::unique_ptr<testing::DeviceBuffer> x_;
  ChipState chip_;
  std::unique_ptr<Orchestrator> orch_;
};

namespace {

// A kernel of 1..3 tensors and 0..2 scalars with a random typed signature.
LoadedKernel random_kernel(std::mt19937_64& rng) {
  LoadedKernel k;
  k.entry = empty_kernel;
  k.tensor_count = 1 + static_cast<uint32_t>(rng() % 3);
  k.scalar_count = static_cast<uint32_t>(rng() % 3);
  for (uint32_t i = 0; i < k.tensor_count; ++i) {
    k.directions[i] = static_cast<uint8_t>(CHIP_ARG_IN + rng() % 3);
    k.dtypes[i] = rng() % 2 == 0 ? LoadedKernel::kAnyDtype : static_cast<uint8_t>(CHIP_DT_FLOAT32);
    k.ranks[i] = static_cast<uint8_t>(rng() % 3);  // 0: any
  }
  k.core_type = static_cast<int32_t>(rng() % 3) - 1;  // -1: not recorded
  k.seal();
  return k;
}

// A task that fits `k`, its tensors views of `x` (or OUT_ALLOC where the kernel writes).
SimplerTaskDesc valid_task(const LoadedKernel& k, const ChipTensor& x, std::mt19937_64& rng) {
  SimplerTaskDesc d{};
  d.func_id = kFunc;
  d.core_type =
      k.core_type >= 0 ? static_cast<uint32_t>(k.core_type) : static_cast<uint32_t>(rng() % 2);
  d.block_num = 1 + static_cast<uint32_t>(rng() % 4);
  d.tensor_count = k.tensor_count;
  d.scalar_count = k.scalar_count;
  for (uint32_t i = 0; i < k.tensor_count; ++i) {
    SimplerTaskTensor& a = d.tensors[i];
    a.tensor = x;
    const uint32_t rank = k.ranks[i] != 0 ? k.ranks[i] : 1 + static_cast<uint32_t>(rng() % 2);
    a.tensor.ndims = rank;
    a.tensor.shapes[0] = rank == 1 ? 16 : 4;
    a.tensor.shapes[1] = 4;
    a.tensor.strides[0] = rank == 1 ? 1 : 4;
    a.tensor.strides[1] = 1;
    a.tensor.start_offset = static_cast<int64_t>(rng() % 64);
    switch (k.directions[i]) {
      case CHIP_ARG_IN:
        a.mode = rng() % 2 == 0 ? SIMPLER_TENSOR_IN : SIMPLER_TENSOR_NODEP;
        break;
      case CHIP_ARG_OUT:
        a.mode = rng() % 2 == 0 ? SIMPLER_TENSOR_OUT : SIMPLER_TENSOR_OUT_ALLOC;
        break;
      default:
        a.mode = SIMPLER_TENSOR_INOUT;
        break;
    }
  }
  return d;
}

int64_t edge(std::mt19937_64& rng) {
  static const int64_t kValues[] = {-1, 0, 1, 2, 3, 4, 16, 1023, 1024, 1025, INT64_MAX, INT64_MIN};
  return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
}

void mutate(SimplerTaskDesc& d, std::mt19937_64& rng) {
  SimplerTaskTensor& a = d.tensors[rng() % 3];
  switch (rng() % 16) {
    case 0:
      d.func_id = static_cast<int32_t>(edge(rng));
      break;
    case 1:
      d.core_type = static_cast<uint32_t>(rng() % 4);
      break;
    case 2:
      d.block_num = rng() % 2 == 0 ? kMaxBlockNum + static_cast<uint32_t>(rng() % 2)
                                   : static_cast<uint32_t>(rng() % 3);
      break;
    case 3:
      d.tensor_count = static_cast<uint32_t>(rng() % 5);
      break;
    case 4:
      d.scalar_count = static_cast<uint32_t>(rng() % 4);
      break;
    case 5:
      a.mode = static_cast<uint32_t>(rng() % 7);
      break;
    case 6:
      a.tensor.dtype = static_cast<uint32_t>(rng() % (CHIP_DT_COUNT + 2));
      break;
    case 7:
      a.tensor.ndims = static_cast<uint32_t>(rng() % (CHIP_TENSOR_MAX_DIMS + 2));
      break;
    case 8:
      a.tensor.start_offset = edge(rng);
      break;
    case 9:
      a.tensor.buffer.size += static_cast<uint64_t>(rng() % 9) - 4;
      break;
    case 10:
      a.tensor.buffer.addr += static_cast<uint64_t>(rng() % 2 == 0 ? 4 : 4096);
      break;
    case 11:
      a.tensor.space = static_cast<uint32_t>(rng() % 3);
      break;
    case 12:
      a.tensor.shapes[rng() % 2] = edge(rng);
      break;
    case 13:
      a.tensor.strides[rng() % 2] = edge(rng);
      break;
    case 14:
      d.core_type = SIMPLER_CORE_MIX;
      break;
    default:
      break;  // unchanged
  }
}

}  // namespace

TEST_F(ValidateTaskTest, TheQuickPathNeverAcceptsWhatTheFullChecksRefuse) {
  std::mt19937_64 rng(20261205);
  const ChipTensor x = x_->tensor({1024});
  uint64_t quick_accepted = 0;
  uint64_t refused = 0;
  for (int program = 0; program < 200; ++program) {
    LoadedProgram::Impl impl;
    impl.kernels[kFunc] = random_kernel(rng);
    impl.func_ids = {kFunc};
    begin(impl);
    const LoadedKernel& k = impl.kernels[kFunc];
    // One valid task through the full checks first: its views are then known to the run.
    SimplerTaskDesc base = valid_task(k, x, rng);
    ASSERT_TRUE(full(&base)) << "program " << program;
    for (int j = 0; j < 200; ++j) {
      SimplerTaskDesc d = valid_task(k, x, rng);
      mutate(d, rng);
      if (rng() % 4 == 0) mutate(d, rng);
      const bool accepted_quickly = quick(&d);
      const bool accepted = full(&d);
      quick_accepted += accepted_quickly ? 1 : 0;
      refused += accepted ? 0 : 1;
      EXPECT_TRUE(!accepted_quickly || accepted)
          << "task_quick_ok accepted a task check_task refuses (program " << program << ", task "
          << j << ")";
    }
    EXPECT_FALSE(quick(nullptr));
    orch_->abort_run();
  }
  EXPECT_GT(quick_accepted, 5000u);  // the quick path does take the common case
  EXPECT_GT(refused, 5000u);
}

// The per-kernel constants the quick path and the immediate run read instead of the
// signature: exactly mode_fits per tensor, nothing past the kernel's tensors, and
// out_alloc (the immediate run scans for OUT_ALLOC only then) iff a tensor is OUT.
TEST(LoadedKernelSeal, ModesAndOutAllocFollowTheSignature) {
  const uint8_t directions[] = {CHIP_ARG_IN, CHIP_ARG_OUT, CHIP_ARG_INOUT};
  for (uint32_t count = 0; count <= 3; ++count) {
    for (uint32_t pick = 0; pick < 27; ++pick) {
      LoadedKernel k;
      k.tensor_count = count;
      bool has_out = false;
      for (uint32_t i = 0, p = pick; i < count; ++i, p /= 3) {
        k.directions[i] = directions[p % 3];
        has_out = has_out || k.directions[i] == CHIP_ARG_OUT;
      }
      EXPECT_TRUE(k.out_alloc) << "before seal: the scan must run";
      k.seal();
      EXPECT_EQ(k.out_alloc, has_out) << count << " tensors, pick " << pick;
      for (uint32_t i = 0; i < CHIP_MAX_TENSOR_ARGS; ++i) {
        for (uint32_t mode = 0; mode < 8; ++mode) {
          const bool fits =
              i < count && mode <= SIMPLER_TENSOR_NODEP && mode_fits(mode, k.directions[i]);
          EXPECT_EQ(((k.modes[i] >> mode) & 1u) != 0, fits) << "tensor " << i << " mode " << mode;
        }
      }
    }
  }
}

}  // namespace simpler::rt
