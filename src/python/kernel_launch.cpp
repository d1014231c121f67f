#include "kernel_launch.h"

#include <climits>
#include <cstdint>
#include <string>
#include <utility>

#include "call_mismatch.h"
#include "process_local.h"
#include "stream_arg.h"
#include "support/counted.h"

namespace py = pybind11;

namespace simpler::python {

KernelLaunch::KernelLaunch(py::object worker_object, Worker& worker, int64_t callable_id,
                           std::vector<ArgSpec> signature, PyChipStorageTaskArgs args)
    : worker_object_(std::move(worker_object)),
      worker_(worker),
      callable_id_(callable_id),
      signature_(std::move(signature)),
      target_{CallMode::KERNEL, worker.options().device_id, "KernelLaunch.set_arg"},
      args_(std::move(args)) {}

void KernelLaunch::launch(py::handle caller_stream) {
  void* stream = stream_pointer(caller_stream, "KernelLaunch.launch");
  if (launching_.exchange(true, std::memory_order_acquire)) {
    throw std::runtime_error(
        "KernelLaunch.launch: this descriptor is being launched on another thread; drive one "
        "descriptor from one thread at a time");
  }
  struct Done {
    std::atomic<bool>& flag;
    ~Done() { flag.store(false, std::memory_order_release); }
  } done{launching_};
  py::gil_scoped_release nogil;
  worker_.kernel_launch(callable_id_, args_.args, stream, "KernelLaunch.launch");
}

void KernelLaunch::set_arg(uint32_t index, py::handle value) {
  if (launching_.load(std::memory_order_acquire)) {
    throw std::runtime_error(
        "KernelLaunch.set_arg: the descriptor is being launched on another thread");
  }
  PyChipStorageTaskArgs updated = args_;  // nothing half-done when the value is refused
  repack_call_arg(index, value, signature_, target_, updated);
  args_ = std::move(updated);
}

py::handle unwrap_arguments(py::handle values) {
  if (PyTuple_GET_SIZE(values.ptr()) == 1) {
    py::handle only = PyTuple_GET_ITEM(values.ptr(), 0);
    if (py::isinstance<PyChipStorageTaskArgs>(only) || is_argument_list(only)) return only;
  }
  return values;
}

namespace {

// launch(caller_stream=...) as a METH_FASTCALL method descriptor: no pybind11 dispatch, no
// argument tuple or dict, so the Python cost of a launch is the call itself.
thread_local std::exception_ptr t_pending_error;

// Turns a C++ exception into the Python exception pybind11's translators would raise
// (error path only): a pybind11 function rethrows it, its dispatcher translates it.
void set_python_error(std::exception_ptr error) {
  static PyObject* rethrow = py::cpp_function([] {
                               std::exception_ptr e = std::exchange(t_pending_error, nullptr);
                               std::rethrow_exception(e);
                             })
                                 .release()
                                 .ptr();  // kept for the life of the process
  t_pending_error = std::move(error);
  PyObject* result = PyObject_CallNoArgs(rethrow);
  Py_XDECREF(result);  // always null: the Python error is now set
}

PyObject* fast_launch(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 0 || kwnames == nullptr || PyTuple_GET_SIZE(kwnames) != 1 ||
      PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "caller_stream") != 0) {
    // A SimplerTypeError, as every wrong call of the API (the translator maps it).
    set_python_error(std::make_exception_ptr(
        py::type_error("KernelLaunch.launch() takes one keyword-only argument: caller_stream=")));
    return nullptr;
  }
  try {
    py::handle(self).cast<KernelLaunch&>().launch(py::handle(args[0]));
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (...) {
    set_python_error(std::current_exception());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef g_launch_def = {
    "launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_launch)),
    METH_FASTCALL | METH_KEYWORDS,
    "launch(*, caller_stream)\n--\n\nEnqueue the bound launch on caller_stream (int handle or "
    "object with .handle) and return. Same rules as Worker.kernel_launch."};

// set_arg's index as any Python int: a negative or huge one is the same ArgumentError as
// one past the signature, never pybind11's "incompatible function arguments".
void set_arg_at(KernelLaunch& k, py::handle index, py::handle value) {
  if (PyBool_Check(index.ptr()) || detail::is_enum(index) || !PyIndex_Check(index.ptr())) {
    throw CallArgError(-1, true,
                       std::string("KernelLaunch.set_arg: index must be an int, got ") +
                           Py_TYPE(index.ptr())->tp_name);
  }
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(index.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0 || n < 0 || static_cast<unsigned long long>(n) >= k.arg_count()) {
    const int named = (overflow == 0 && n >= 0 && n <= INT32_MAX) ? static_cast<int>(n) : -1;
    const std::string text = py::repr(i).cast<std::string>();
    throw CallArgError(named, false,
                       "KernelLaunch.set_arg: argument index " + text +
                           " is out of range (the signature has " +
                           support::counted(k.arg_count(), "argument") + ")");
  }
  k.set_arg(static_cast<uint32_t>(n), value);
}

}  // namespace

void bind_kernel_launch(py::module_& m) {
  py::class_<KernelLaunch> cls(m, "KernelLaunch",
                               "A kernel-mode launch validated and packed once by "
                               "Worker.kernel_bind; launch(caller_stream=...) re-enqueues it.");
  PyObject* launch = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &g_launch_def);
  if (launch == nullptr) throw py::error_already_set();
  py::setattr(cls, "launch", py::reinterpret_steal<py::object>(launch));
  cls.def("set_arg", &set_arg_at, py::arg("index"), py::arg("value"),
          "Rebind argument `index` (a tensor or a scalar, checked like kernel_bind's).")
      .def_property_readonly("callable_id", &KernelLaunch::callable_id)
      .def("__len__", &KernelLaunch::arg_count)
      .def_property_readonly(
          "args", [](const KernelLaunch& k) { return k.args(); },
          "A copy of the packed arguments (a ChipStorageTaskArgs).")
      .def("__repr__", [](const KernelLaunch& k) {
        return "<simpler.KernelLaunch callable_id=" + std::to_string(k.callable_id()) +
               " args=" + std::to_string(k.arg_count()) + ">";
      });
  refuse_pickling(cls,
                  "KernelLaunch cannot be pickled or copied: it is bound to a callable a Worker "
                  "of this process prepared; make another with Worker.kernel_bind");
  // set_arg and the constructor (launch, a method descriptor, checks its own call).
  detail::translate_call_mismatches(
      cls, "has no constructor; make one with Worker.kernel_bind(callable_id, *args)");
}

}  // namespace simpler::python
