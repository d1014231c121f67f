// Every exception the native layer raises derives from simpler.errors.SimplerError, while
// keeping the builtin class callers already catch: std::invalid_argument and
// py::value_error -> SimplerValueError (a ValueError), py::type_error -> SimplerTypeError
// (a TypeError), py::attribute_error -> SimplerAttributeError (an AttributeError),
// py::index_error -> SimplerIndexError (an IndexError), any other std::runtime_error ->
// SimplerRuntimeError (a RuntimeError).
// Registered first, so the layers' own translators (ChipWorkerError, KernelCompileError,
// ...) are tried before it; what it does not name falls through to pybind11's defaults.
#include <stdexcept>
#include <string>

#include "bindings.h"

namespace py = pybind11;

namespace simpler::python {
namespace {

void raise_as(const char* name, const char* message) {
  try {
    py::object cls = py::module_::import("simpler.errors").attr(name);
    PyErr_SetObject(cls.ptr(), cls(message).ptr());
  } catch (py::error_already_set&) {
    // simpler.errors could not be imported: still raise, as the builtin class.
    PyErr_SetString(PyExc_RuntimeError, message);
  }
}

// By value: pybind11 takes a translator as void(*)(std::exception_ptr).
void translate_generic_errors(
    std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
  try {
    if (p) std::rethrow_exception(p);
  } catch (const py::error_already_set&) {
    throw;  // a Python exception already: leave it as it is
  } catch (const py::value_error& e) {
    raise_as("SimplerValueError", e.what());
  } catch (const py::type_error& e) {
    raise_as("SimplerTypeError", e.what());
  } catch (const py::attribute_error& e) {
    raise_as("SimplerAttributeError", e.what());
  } catch (const py::index_error& e) {
    raise_as("SimplerIndexError", e.what());
  } catch (const py::builtin_exception&) {
    throw;  // KeyError, StopIteration, ...: pybind11's own mapping
  } catch (const std::invalid_argument& e) {
    raise_as("SimplerValueError", e.what());
  } catch (const std::range_error&) {
    throw;  // pybind11 maps these to ValueError
  } catch (const std::overflow_error&) {
    throw;
  } catch (const std::runtime_error& e) {
    raise_as("SimplerRuntimeError", e.what());
  }
}

}  // namespace

void bind_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator(&translate_generic_errors);
}

}  // namespace simpler::python
