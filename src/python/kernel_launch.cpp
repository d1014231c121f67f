#include "kernel_launch.h"

#include <string>
#include <utility>

#include "stream_arg.h"

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
  void* stream = stream_pointer(caller_stream);
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
  worker_.kernel_launch(callable_id_, args_.args, stream);
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

void bind_kernel_launch(py::module_& m) {
  py::class_<KernelLaunch>(m, "KernelLaunch",
                           "A kernel-mode launch validated and packed once by "
                           "Worker.kernel_bind; launch(caller_stream=...) re-enqueues it.")
      .def("launch", &KernelLaunch::launch, py::kw_only(), py::arg("caller_stream"),
           "Enqueue the bound launch on caller_stream (int handle or object with .handle) "
           "and return. Same rules as Worker.kernel_launch.")
      .def("set_arg", &KernelLaunch::set_arg, py::arg("index"), py::arg("value"),
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
}

}  // namespace simpler::python
