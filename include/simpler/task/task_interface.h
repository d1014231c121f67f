// simpler — C++ task-interface types: the data that crosses every boundary.
//
// The POD layouts live in abi/chip_types.h; this header adds typed C++ helpers:
// element sizes and names, tensor views, argument packing, config validation and the
// flat callable images. Invalid input throws TaskInterfaceError naming the field.
// parse_chip_callable_image() is the non-throwing reader used behind the C ABI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simpler/abi/chip_types.h"
#include "simpler/kernel/kernel_abi.h"

namespace simpler {

enum class DataType : uint32_t {
  FLOAT32 = CHIP_DT_FLOAT32,
  FLOAT16 = CHIP_DT_FLOAT16,
  BFLOAT16 = CHIP_DT_BFLOAT16,
  INT8 = CHIP_DT_INT8,
  INT16 = CHIP_DT_INT16,
  INT32 = CHIP_DT_INT32,
  INT64 = CHIP_DT_INT64,
  UINT8 = CHIP_DT_UINT8,
  UINT16 = CHIP_DT_UINT16,
  UINT32 = CHIP_DT_UINT32,
  UINT64 = CHIP_DT_UINT64,
  BOOL = CHIP_DT_BOOL,
  FLOAT64 = CHIP_DT_FLOAT64,
};
enum class ArgDirection : uint32_t { SCALAR = 0, IN = 1, OUT = 2, INOUT = 3 };
enum class AddressSpace : uint32_t { HOST = CHIP_SPACE_HOST, DEVICE = CHIP_SPACE_DEVICE };
// The core type a kernel is compiled for (values of SimplerCoreType).
// MIX: a cluster-task kernel, run on the AIC and the AIV cores of whole clusters at once.
enum class CoreType : uint32_t {
  AIC = SIMPLER_CORE_AIC,
  AIV = SIMPLER_CORE_AIV,
  MIX = SIMPLER_CORE_MIX
};
const char* core_type_name(CoreType core);                           // "aic" / "aiv" / "mix"
std::optional<CoreType> core_type_from_name(std::string_view name);  // the same (any case)

// One entry of a callable's signature: a direction and, optionally, what the kernel
// expects there. An untyped entry (no dtype, rank 0) accepts anything of its kind.
// For a tensor, `dtype` is its element type and `rank` its ndims (1..5, 0 = any); for a
// scalar, `dtype` is the type the 64-bit pattern holds (bindings convert numbers to it)
// and `rank` must be 0.
struct ArgSpec {
  ArgDirection direction = ArgDirection::IN;
  std::optional<DataType> dtype;
  uint32_t rank = 0;
  bool typed() const { return dtype.has_value() || rank != 0; }
};
std::string arg_spec_text(const ArgSpec& spec);  // "IN FLOAT32[rank 2]", "SCALAR INT32", "OUT"

// Bad input to any task-interface type. The message names the offending field.
class TaskInterfaceError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Call arguments that do not fit a typed signature (wrong dtype, rank or core type).
// arg_index() is the argument's position in the signature (-1: not about one argument).
class SignatureMismatch : public TaskInterfaceError {
 public:
  SignatureMismatch(int64_t arg_index, const std::string& message)
      : TaskInterfaceError(message), arg_index_(arg_index) {}
  int64_t arg_index() const noexcept { return arg_index_; }

 private:
  int64_t arg_index_;
};

bool is_valid_data_type(uint32_t raw);
size_t element_size(DataType dtype);         // throws on an invalid value
const char* data_type_name(DataType dtype);  // "FLOAT32", ...
std::optional<DataType> data_type_from_name(std::string_view name);
const char* arg_direction_name(ArgDirection dir);

// ---- tensors (zero-copy views over ChipTensor) ------------------------------------
int64_t tensor_numel(const ChipTensor& t);
bool tensor_is_contiguous(const ChipTensor& t);
// Byte range [first, last) relative to buffer.addr touched by the view (empty -> 0,0).
std::pair<uint64_t, uint64_t> tensor_byte_extent(const ChipTensor& t);
// Throws unless ndims in 1..5, dtype valid, shapes >= 0, and the view fits the buffer.
void validate_tensor(const ChipTensor& t);
// A contiguous row-major tensor over [addr, addr + buffer_bytes); buffer_bytes 0 means
// exactly numel * element size.
ChipTensor make_tensor(uint64_t addr, std::span<const int64_t> shape, DataType dtype,
                       AddressSpace space, uint64_t buffer_bytes = 0);
ChipTensor tensor_slice(const ChipTensor& t, uint32_t dim, int64_t start, int64_t stop);
ChipTensor tensor_reshape(const ChipTensor& t, std::span<const int64_t> shape);  // contiguous only
ChipTensor tensor_transpose(const ChipTensor& t, uint32_t dim0, uint32_t dim1);

// ---- call arguments ----------------------------------------------------------------
// Appends with checks: a tensor after a scalar, capacity overflow or an invalid tensor
// throws and leaves `args` unchanged.
void args_add_tensor(ChipStorageTaskArgs& args, const ChipTensor& t);
void args_add_scalar(ChipStorageTaskArgs& args, uint64_t bits);
uint64_t scalar_bits_from_f32(float v);  // low 32 bits
uint64_t scalar_bits_from_f64(double v);
uint64_t scalar_bits_from_i64(int64_t v);
float scalar_bits_to_f32(uint64_t bits);
double scalar_bits_to_f64(uint64_t bits);

// Checks the tensors of `args` against the dtype/rank a typed signature declares (counts
// and directions are the runtime's check). "" when they fit, else the reason naming the
// first mismatching argument: "argument 1 (IN): expected dtype FLOAT32, given FLOAT64";
// `*arg_index` is set to its position. Untyped entries accept anything.
std::string check_typed_args(const ChipStorageTaskArgs& args, std::span<const ArgSpec> signature,
                             int64_t* arg_index = nullptr);

// ---- configuration -----------------------------------------------------------------
struct CallConfig {
  bool enable_swimlane = false;
  bool dump_args = false;
  bool dump_dep_graph = false;
  bool enable_profiling = false;
  std::string output_prefix;
  int32_t aicpu_thread_num = 0;
  uint64_t task_window_size = 0;
  uint64_t heap_ring_bytes = 0;
  uint64_t dep_pool_size = 0;
  uint64_t tensormap_capacity = 0;
  uint64_t watchdog_timeout_ms = 0;
  // Program mode: 0/1 = a run starts after every earlier run finished (default); D > 1 =
  // its orchestration may start while up to D - 1 earlier runs still execute
  // (1..SIMPLER_MAX_PIPELINE_DEPTH; docs/api.md "Pipelined runs").
  uint32_t pipeline_depth = 0;

  void validate() const;             // throws TaskInterfaceError naming the field
  SimplerCallConfig to_abi() const;  // validates first
  static CallConfig from_abi(const SimplerCallConfig& c);
};
// Non-throwing check of an ABI config (used behind the C ABI): empty string when valid,
// else the reason.
std::string validate_call_config(const SimplerCallConfig& c);

// ---- callables (flat, position-independent byte images) ------------------------------
struct CoreCallableView {
  std::span<const uint8_t> signature;  // ArgDirection values
  std::span<const uint8_t> binary;
  std::span<const uint8_t> arg_types;  // empty (untyped) or 2 bytes per signature entry
  std::optional<CoreType> core_type;   // the core the kernel was compiled for, if recorded
};
struct ChipCallableView {
  std::span<const uint8_t> signature;
  std::span<const uint8_t> arg_types;  // empty (untyped) or 2 bytes per signature entry
  std::string_view func_name;
  std::span<const uint8_t> binary;
  struct Child {
    int32_t func_id;
    CoreCallableView callable;
    std::span<const uint8_t> image;  // the embedded CoreCallable image (its exact bytes)
  };
  std::vector<Child> children;  // sorted by func_id, unique
};

// Full bounds-checked walk of an image. Returns true and fills `out` (views into
// `data`), or false with `error` naming the field. Never reads outside [data, data+size).
bool parse_core_callable_image(const void* data, size_t size, CoreCallableView* out,
                               std::string* error);
bool parse_chip_callable_image(const void* data, size_t size, ChipCallableView* out,
                               std::string* error);

// The signature of a view as ArgSpecs (untyped entries when `arg_types` is empty).
std::vector<ArgSpec> arg_specs_of(std::span<const uint8_t> signature,
                                  std::span<const uint8_t> arg_types);

class CoreCallable {
 public:
  static CoreCallable build(std::span<const ArgDirection> signature,
                            std::span<const uint8_t> binary);
  // A typed signature and/or the core type the binary was compiled for. Untyped with no
  // core type gives the same (version 1) image as the overload above.
  static CoreCallable build(std::span<const ArgSpec> signature, std::span<const uint8_t> binary,
                            std::optional<CoreType> core_type = std::nullopt);
  static CoreCallable from_bytes(std::span<const uint8_t> image);  // validates
  std::span<const uint8_t> bytes() const { return image_; }
  CoreCallableView view() const;
  std::vector<ArgDirection> signature() const;
  std::vector<ArgSpec> arg_specs() const;
  std::optional<CoreType> core_type() const;

 private:
  std::vector<uint8_t> image_;
};

class ChipCallable {
 public:
  static ChipCallable build(std::span<const ArgDirection> signature, std::string_view func_name,
                            std::span<const uint8_t> binary,
                            const std::vector<std::pair<int32_t, CoreCallable>>& children);
  static ChipCallable build(std::span<const ArgSpec> signature, std::string_view func_name,
                            std::span<const uint8_t> binary,
                            const std::vector<std::pair<int32_t, CoreCallable>>& children);
  static ChipCallable from_bytes(std::span<const uint8_t> image);  // validates
  std::span<const uint8_t> bytes() const { return image_; }
  ChipCallableView view() const;
  std::vector<ArgDirection> signature() const;
  std::vector<ArgSpec> arg_specs() const;
  std::string func_name() const;

 private:
  std::vector<uint8_t> image_;
};

}  // namespace simpler
