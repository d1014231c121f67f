// Call arguments in signature order (the "borrowed" form): run/submit/kernel_launch/
// kernel_bind accept, besides a ChipStorageTaskArgs, a list of arguments where a tensor is
// a sim.DeviceArray, a ChipTensor, any DLPack producer on the simulated device, or (where
// the mode allows host memory) a host array, and a scalar is a Python or numpy number.
//
// Borrowed: nothing is copied and no ownership is taken; the packed args point at the
// caller's memory, which the caller keeps alive until the work that uses it finished (in
// kernel mode: in the order of its own stream). A host array (program mode) is held by a
// buffer lease for the run, as a ChipTensor.from_array would be.
//
// Every check runs before anything is enqueued; a bad argument throws CallArgError naming
// its index and what was expected.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "simpler/task/task_interface.h"
#include "task_interface_types.h"

namespace simpler::python {

// Signature entries are simpler::ArgSpec (direction, and for typed signatures the dtype
// and rank); ChipCallable::arg_specs() gives them.

enum class CallMode { KERNEL, PROGRAM };
struct PackTarget {
  CallMode mode = CallMode::KERNEL;
  int32_t device = 0;
  const char* api = "";  // "Worker.kernel_launch", ... (starts every message)
};

// A bad argument. index < 0: the argument list as a whole (e.g. the count).
// Translated to simpler.errors.ArgumentTypeError (type_error) or ArgumentError.
class CallArgError : public std::exception {
 public:
  CallArgError(int index, bool type_error, std::string message)
      : index_(index), type_error_(type_error), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  int index() const { return index_; }
  bool type_error() const { return type_error_; }

 private:
  int index_;
  bool type_error_;
  std::string message_;
};

// True for the borrowed form (a list or tuple of arguments).
bool is_argument_list(pybind11::handle obj);
// Packs `values` (a list or tuple in signature order) into `out`, replacing its content
// (left unspecified when an argument is refused: pack into a fresh object).
void pack_call_args(pybind11::handle values, std::span<const ArgSpec> signature,
                    const PackTarget& target, PyChipStorageTaskArgs& out);
// Replaces argument `index` of already packed args (same checks as pack_call_args).
void repack_call_arg(uint32_t index, pybind11::handle value, std::span<const ArgSpec> signature,
                     const PackTarget& target, PyChipStorageTaskArgs& out);

namespace detail {
// Throw CallArgError for argument i, prefixed with "<api>: argument i (<direction>)".
[[noreturn]] void bad_value(const PackTarget& t, uint32_t i, const ArgSpec& spec,
                            const std::string& why);
[[noreturn]] void bad_type(const PackTarget& t, uint32_t i, const ArgSpec& spec,
                           const std::string& why);
// scalar_args.cpp: a Python int/float or numpy scalar as the 64-bit pattern of the
// signature's scalar type (untyped: int as its 64-bit pattern, float as FLOAT32, a numpy
// scalar as its own type; typed: converted and range-checked, a numpy number like the
// Python number of its value).
uint64_t pack_scalar(const PackTarget& t, uint32_t i, const ArgSpec& spec, pybind11::handle value);
// The caller's type for a message: "str", "numpy.ndarray", "torch.Tensor", "DeviceArray".
std::string type_name(pybind11::handle obj);
}  // namespace detail

// Registers the CallArgError translator (simpler.errors classes, imported lazily).
void register_call_arg_errors();

}  // namespace simpler::python
