// Writes the seed corpus of the harnesses: make_seeds <corpus dir>. The committed corpus
// (fuzz/corpus) was made with it; rerun after an image-format or struct change.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "simpler/task/task_interface.h"

namespace {

using simpler::ArgDirection;
namespace fs = std::filesystem;

void write(const fs::path& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

void callable_seeds(const fs::path& dir) {
  fs::create_directories(dir);
  using D = ArgDirection;
  const auto k1 = simpler::CoreCallable::build(std::vector<D>{D::IN, D::OUT}, bytes("kernel-one"));
  const auto k2 = simpler::CoreCallable::build(std::vector<D>{D::INOUT, D::SCALAR}, bytes("k2"));
  write(dir / "core_2args", k1.bytes().data(), k1.bytes().size());
  write(dir / "core_inout_scalar", k2.bytes().data(), k2.bytes().size());
  const auto empty = simpler::ChipCallable::build(std::vector<D>{}, "entry", bytes("orch"), {});
  write(dir / "chip_no_children", empty.bytes().data(), empty.bytes().size());
  const auto two =
      simpler::ChipCallable::build(std::vector<D>{D::IN, D::OUT, D::SCALAR}, "orch_main",
                                   bytes("\x7f"
                                         "ELF-orchestration"),
                                   {{4, k1}, {17, k2}});
  write(dir / "chip_two_children", two.bytes().data(), two.bytes().size());
}

// arg_types: empty (untyped) or (dtype, rank) per signature entry, as fuzz_task_args reads.
void args_seed(const fs::path& path, const std::vector<ArgDirection>& signature,
               const ChipStorageTaskArgs& args, uint64_t seed,
               const std::vector<uint8_t>& arg_types = {}) {
  std::vector<uint8_t> out;
  out.push_back(static_cast<uint8_t>(signature.size()));
  for (auto d : signature) out.push_back(static_cast<uint8_t>(d));
  const auto* raw = reinterpret_cast<const uint8_t*>(&args);
  out.insert(out.end(), raw, raw + sizeof args);
  const auto* s = reinterpret_cast<const uint8_t*>(&seed);
  out.insert(out.end(), s, s + sizeof seed);
  out.insert(out.end(), arg_types.begin(), arg_types.end());
  write(path, out.data(), out.size());
}

void args_seeds(const fs::path& dir) {
  fs::create_directories(dir);
  using D = ArgDirection;
  const int64_t shape2[] = {4, 8};
  const int64_t shape1[] = {16};
  ChipStorageTaskArgs a{};
  simpler::args_add_tensor(a, simpler::make_tensor(0x10000, shape2, simpler::DataType::FLOAT32,
                                                   simpler::AddressSpace::DEVICE));
  simpler::args_add_tensor(a, simpler::make_tensor(0x10400, shape1, simpler::DataType::INT64,
                                                   simpler::AddressSpace::DEVICE));
  simpler::args_add_scalar(a, simpler::scalar_bits_from_f32(0.5f));
  args_seed(dir / "device_2t_1s", {D::IN, D::OUT, D::SCALAR}, a, 0x0102030405060708ull);
  // The same launch against a typed signature (a kernel-mode launch of a typed callable).
  args_seed(dir / "device_2t_1s_typed", {D::IN, D::OUT, D::SCALAR}, a, 0,
            {CHIP_DT_FLOAT32, 2, CHIP_DT_INT64, 1, CHIP_DT_FLOAT32, 0});
  ChipStorageTaskArgs h{};
  simpler::args_add_tensor(h,
                           simpler::make_tensor(0x7f0000001000, shape2, simpler::DataType::FLOAT16,
                                                simpler::AddressSpace::HOST, 4096));
  args_seed(dir / "host_1t", {D::INOUT}, h, 1);
  ChipStorageTaskArgs sliced{};
  const ChipTensor t = simpler::make_tensor(0x10000, shape2, simpler::DataType::FLOAT32,
                                            simpler::AddressSpace::DEVICE);
  simpler::args_add_tensor(sliced,
                           simpler::tensor_transpose(simpler::tensor_slice(t, 1, 2, 6), 0, 1));
  args_seed(dir / "device_view", {D::IN}, sliced, 0x00ff00ff00ff00ffull);
  args_seed(dir / "empty", {}, ChipStorageTaskArgs{}, 0);
  // A raw count equal to the checked-args cache's "nothing remembered" value.
  ChipStorageTaskArgs sentinel{};
  sentinel.tensor_count = UINT32_MAX;
  args_seed(dir / "sentinel_tensor_count", {D::IN}, sentinel, 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds <corpus dir>\n");
    return 2;
  }
  const fs::path root = argv[1];
  callable_seeds(root / "callable_image");
  args_seeds(root / "task_args");
  return 0;
}
