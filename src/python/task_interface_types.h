// The C++ objects behind simpler.task_interface, for every binding that accepts them.
//
// Python class            C++ type held by the pybind11 instance
//   ChipTensor            simpler::python::PyChipTensor      (.tensor is the ChipTensor)
//   ChipStorageTaskArgs   simpler::python::PyChipStorageTaskArgs (.args is the ABI struct)
//   CallConfig            simpler::CallConfig
//   CoreCallable          simpler::CoreCallable
//   ChipCallable          simpler::ChipCallable
//   DataType/ArgDirection/AddressSpace  simpler::DataType / ArgDirection / AddressSpace
//
// Other bindings take them as `const PyChipStorageTaskArgs&`, `const simpler::ChipCallable&`,
// `const simpler::CallConfig&` parameters (or py::cast<...>(obj)). All of them are
// registered in simpler._native.task_interface.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <vector>

#include "simpler/task/task_interface.h"

namespace simpler::python {

// A buffer export of a Python object (numpy array, bytearray, ...), held while any
// tensor over it lives: the exporter can neither free nor resize the memory meanwhile.
// Safe to destroy from any thread (it takes the GIL to release the export).
class HostBufferLease {
 public:
  // Exports `obj`, writable when the exporter allows it, else read-only.
  // Throws pybind11::type_error when `obj` does not support the buffer protocol.
  // producer_writable: `obj` is numpy's import of a DLPack host tensor, which numpy marks
  // read-only although DLPack (0.6) carries no read-only flag: the producer's memory is
  // writable (a torch CPU tensor), so the lease counts as writable.
  explicit HostBufferLease(pybind11::handle obj, bool producer_writable = false);
  ~HostBufferLease();
  HostBufferLease(const HostBufferLease&) = delete;
  HostBufferLease& operator=(const HostBufferLease&) = delete;

  const Py_buffer& view() const { return view_; }
  bool readonly() const { return view_.readonly != 0 && !producer_writable_; }

 private:
  Py_buffer view_{};
  bool producer_writable_ = false;
};

struct PyChipTensor {
  ChipTensor tensor{};
  // Set for a HOST tensor made from a Python buffer: keeps that memory alive.
  std::shared_ptr<const HostBufferLease> host;
};

struct PyChipStorageTaskArgs {
  ChipStorageTaskArgs args{};
  // host[i] keeps the memory of args.tensors[i] alive (null for DEVICE tensors).
  std::vector<std::shared_ptr<const HostBufferLease>> host;
};

namespace detail {
// The DataType of a struct-module (buffer protocol) format code with the given item size.
std::optional<DataType> dtype_of_format(const char* format, size_t itemsize);

// bool or numpy.bool_: both implement __index__, neither is an int argument.
bool is_bool(pybind11::handle value);
// A member of an enum (DataType.INT32): not an int where a size, count or id is expected.
bool is_enum(pybind11::handle value);
// value as a Python int object (numpy integers too; bool and numpy.bool_ refused): null
// when it is none, or a TypeError naming `what`.
pybind11::object index_or_null(pybind11::handle value);
pybind11::object index_of(pybind11::handle value, const char* what);

// Python arguments of the task-interface bindings, converted with errors that name them
// (SimplerTypeError for a wrong type, SimplerValueError out of range) instead of pybind11's
// "incompatible function arguments": an int (not bool, numpy integers too) in [lo, hi];
// an int in 0..2**64-1; a sequence of ints; a DataType; a float.
int64_t int_arg(pybind11::handle value, const char* what, int64_t lo, int64_t hi);
uint64_t u64_arg(pybind11::handle value, const char* what);
std::vector<int64_t> ints_arg(pybind11::handle value, const char* what);
DataType data_type_arg(pybind11::handle value, const char* what);
double float_arg(pybind11::handle value, const char* what);

// The parts of bind_task_interface(), one file each.
void bind_task_interface_enums(pybind11::module_& m);
void bind_task_interface_tensor(pybind11::module_& m);
void bind_task_interface_args(pybind11::module_& m);
void bind_task_interface_config(pybind11::module_& m);
void bind_task_interface_callables(pybind11::module_& m);
}  // namespace detail

}  // namespace simpler::python
