// Builds the test programs' ChipCallables from their image files.
#include "program_catalog.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace simpler::test_programs {
namespace {

constexpr ArgDirection S = ArgDirection::SCALAR;
constexpr ArgDirection I = ArgDirection::IN;
constexpr ArgDirection O = ArgDirection::OUT;
constexpr ArgDirection IO = ArgDirection::INOUT;

CoreCallable k(const char* path, std::vector<ArgDirection> signature) {
  return kernel_callable(path, signature);
}

}  // namespace

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path + " (build the tests/programs images first)");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read " + path);
  return bytes;
}

CoreCallable kernel_callable(const std::string& kernel_path,
                             const std::vector<ArgDirection>& signature) {
  const std::vector<uint8_t> bytes = read_file_bytes(kernel_path);
  return CoreCallable::build(signature, bytes);
}

ChipCallable chip_callable(const std::string& orchestration_path, const std::string& func_name,
                           const std::vector<ArgDirection>& signature,
                           const std::vector<std::pair<int32_t, CoreCallable>>& children) {
  const std::vector<uint8_t> bytes = read_file_bytes(orchestration_path);
  return ChipCallable::build(signature, func_name, bytes, children);
}

ChipCallable vector_add() {
  return chip_callable(paths::orch_vector_add, "orch_vector_add", {I, I, O},
                       {{0, k(paths::kernel_vector_add, {I, I, O})}});
}

ChipCallable add_scalar() {
  return chip_callable(paths::orch_add_scalar, "orch_add_scalar", {I, O, S},
                       {{0, k(paths::kernel_add_scalar, {I, O, S})}});
}

ChipCallable dag() {
  return chip_callable(paths::orch_dag, "orch_dag", {I, I, O},
                       {{0, k(paths::kernel_vector_add, {I, I, O})},
                        {1, k(paths::kernel_add_scalar, {I, O, S})},
                        {2, k(paths::kernel_mul, {I, I, O})}});
}

ChipCallable nested_scopes() {
  return chip_callable(paths::orch_nested_scopes, "orch_nested_scopes", {IO, S, S},
                       {{0, k(paths::kernel_add_scalar, {I, O, S})},
                        {1, k(paths::kernel_add_const, {IO, S})},
                        {2, k(paths::kernel_vector_add, {I, I, O})}});
}

ChipCallable matmul() {
  return chip_callable(
      paths::orch_matmul, "orch_matmul", {I, I, O},
      {{0, k(paths::kernel_gemm_tile, {I, I, O})}, {1, k(paths::kernel_accumulate, {IO, I, S})}});
}

ChipCallable spmd() {
  return chip_callable(paths::orch_spmd, "orch_spmd", {O, S, S},
                       {{0, k(paths::kernel_spmd_block_id, {O})}});
}

ChipCallable fatal() {
  return chip_callable(paths::orch_fatal, "orch_fatal", {IO},
                       {{0, k(paths::kernel_add_const, {IO, S})}});
}

ChipCallable ring_deadlock() {
  return chip_callable(paths::orch_ring_deadlock, "orch_ring_deadlock", {I, S},
                       {{0, k(paths::kernel_add_scalar, {I, O, S})}});
}

ChipCallable kernel_fault() {
  return chip_callable(
      paths::orch_kernel_fault, "orch_kernel_fault", {IO},
      {{0, k(paths::kernel_fault, {IO})}, {1, k(paths::kernel_add_const, {IO, S})}});
}

ChipCallable sleep() {
  return chip_callable(paths::orch_sleep, "orch_sleep", {IO, S},
                       {{0, k(paths::kernel_sleep, {IO, S})}});
}

ChipCallable pipeline() {
  return chip_callable(
      paths::orch_pipeline, "orch_pipeline", {IO, IO, S, S},
      {{0, k(paths::kernel_sleep, {IO, S})}, {1, k(paths::kernel_slow_copy, {I, O, S})}});
}

ChipCallable cluster() {
  return chip_callable(paths::orch_cluster, "orch_cluster", {I, O, S, S},
                       {{0, k(paths::kernel_cluster_exchange, {I, O, S})}});
}

ChipCallable cluster_outside() {
  return chip_callable(paths::orch_cluster, "orch_cluster_outside", {I, O},
                       {{0, k(paths::kernel_cluster_exchange, {I, O, S})}});
}

ChipCallable cluster_stream() {
  return chip_callable(
      paths::orch_cluster, "orch_cluster_stream", {I, O, IO, S, S, S},
      {{0, k(paths::kernel_cluster_exchange, {I, O, S})}, {1, k(paths::kernel_sleep, {IO, S})}});
}

ChipCallable fan_out() {
  return chip_callable(paths::orch_fan_out, "orch_fan_out", {IO, S, S},
                       {{0, k(paths::kernel_overlap_probe, {IO, S})}});
}

ChipCallable chain_tally() {
  return chip_callable(
      paths::orch_chain_tally, "orch_chain_tally", {O, IO, S},
      {{0, k(paths::kernel_spmd_block_id, {O})}, {1, k(paths::kernel_thread_tally, {IO, S})}});
}

ChipCallable cluster_then() {
  return chip_callable(
      paths::orch_cluster, "orch_cluster_then", {I, O, S},
      {{0, k(paths::kernel_cluster_exchange, {I, O, S})}, {1, k(paths::kernel_sleep, {IO, S})}});
}

ChipCallable cluster_fan() {
  return chip_callable(paths::orch_cluster, "orch_cluster_fan", {I, O, IO, S, S},
                       {{0, k(paths::kernel_cluster_exchange, {I, O, S})},
                        {1, k(paths::kernel_overlap_probe, {IO, S})}});
}

ChipCallable crash() {
  return chip_callable(paths::orch_crash, "orch_crash", {IO, S, S},
                       {{0, k(paths::kernel_crash, {IO, S})}});
}

ChipCallable many_args() {
  return chip_callable(paths::orch_many_args, "orch_many_args",
                       {IO, IO, IO, IO, IO, IO, S, S, S, S, S, S, S, S, S, S},
                       {{0, k(paths::kernel_add_scalar, {I, O, S})}});
}

ChipCallable values() {
  return chip_callable(paths::orch_values, "orch_values", {IO, O},
                       {{0, k(paths::kernel_add_scalar, {I, O, S})}});
}

ChipCallable explicit_dep() {
  return chip_callable(
      paths::orch_explicit_dep, "orch_explicit_dep", {IO, O, S},
      {{0, k(paths::kernel_sleep, {IO, S})}, {1, k(paths::kernel_add_scalar, {I, O, S})}});
}

ChipCallable misuse() {
  return chip_callable(paths::orch_misuse, "orch_misuse", {IO, S},
                       {{0, k(paths::kernel_add_const, {IO, S})}});
}

ChipCallable bench() {
  return chip_callable(paths::orch_bench, "orch_bench", {IO, S, S, S},
                       {{0, k(paths::kernel_empty, {O})},
                        {1, k(paths::kernel_empty, {I, O})},
                        {2, k(paths::kernel_empty, {I, I, O})},
                        {3, k(paths::kernel_empty, {I, I, I, O})},
                        {4, k(paths::kernel_empty, {IO})}});
}

}  // namespace simpler::test_programs
