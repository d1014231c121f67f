// caller_stream arguments: an int handle, or an object with an int `.handle`
// (simpler.sim.Stream). Shared by every binding that enqueues on a caller's stream.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>

#include "task_interface_types.h"

namespace simpler::python {

// zero_allowed: 0 maps to nullptr (the ChipWorker refuses it with INVALID_ARGUMENT);
// otherwise 0 is a ValueError naming caller_stream. `api` prefixes the messages (the API
// the caller used, e.g. "Worker.kernel_launch").
inline void* stream_pointer(pybind11::handle stream, const char* api, bool zero_allowed = false) {
  namespace py = pybind11;
  PyObject* value = stream.ptr();
  if (value == Py_None) {
    throw py::type_error(std::string(api) +
                         ": caller_stream is required: the stream to enqueue on, an int handle "
                         "or an object with an int .handle (simpler.sim.Stream)");
  }
  py::object holder;
  if (!PyLong_CheckExact(value)) {
    if (!PyLong_Check(value) && PyObject_HasAttrString(value, "handle")) {
      holder = stream.attr("handle");
      value = holder.ptr();
    }
    // A numpy integer is an int handle too (only on this slow path); a bool is not.
    if (!PyLong_Check(value)) {
      if (py::object index = detail::index_or_null(value)) {
        holder = std::move(index);
        value = holder.ptr();
      }
    }
    if (!PyLong_Check(value) || PyBool_Check(value)) {
      throw py::type_error(std::string(api) +
                           ": caller_stream: expected a stream handle (int) or an object with "
                           "an int .handle, got " +
                           Py_TYPE(stream.ptr())->tp_name);
    }
  }
  const unsigned long long raw = PyLong_AsUnsignedLongLong(value);
  if (raw == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(std::string(api) +
                          ": caller_stream: not a valid stream handle (negative or too large)");
  }
  if (raw == 0 && !zero_allowed) {
    throw py::value_error(std::string(api) +
                          ": caller_stream: must be a nonzero stream handle (the stream the "
                          "caller created on its current device)");
  }
  return reinterpret_cast<void*>(static_cast<uintptr_t>(raw));
}

}  // namespace simpler::python
