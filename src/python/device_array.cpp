#include "device_array.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <exception>
#include <string>

#include "dlpack_bridge.h"

namespace py = pybind11;

namespace simpler::python {
namespace {

[[noreturn]] void raise_sim(const std::string& what, int status) {
  py::object cls = py::module_::import("simpler.errors").attr("SimError");
  const std::string message =
      what + " failed: " + simpler_status_name(status) + " (" + std::to_string(status) + ")";
  PyErr_SetObject(cls.ptr(), cls(message, status).ptr());
  throw py::error_already_set();
}

sim_stream_t stream_of(const py::object& stream) {
  if (stream.is_none()) return nullptr;
  py::object handle = stream;
  if (!PyLong_Check(stream.ptr()) && py::hasattr(stream, "handle")) handle = stream.attr("handle");
  if (!PyLong_Check(handle.ptr()) || PyBool_Check(handle.ptr())) {
    throw py::type_error(std::string("DeviceArray: stream must be None, a stream handle (int) or "
                                     "an object with an int .handle, got ") +
                         Py_TYPE(stream.ptr())->tp_name);
  }
  const auto raw = handle.cast<uint64_t>();
  if (raw == 0) throw py::value_error("DeviceArray: stream handle 0 is not a stream");
  return reinterpret_cast<sim_stream_t>(static_cast<uintptr_t>(raw));
}

// The stream-ordered free: a device job that does nothing, whose cleanup (run even when an
// earlier error made the stream skip work) frees the memory.
int no_work(void*) { return SIMPLER_OK; }

// What a stream-ordered free needs to know when it finally runs: a device reset between
// the enqueue and the job frees everything itself, and the address may be reused by then.
struct PendingFree {
  void* ptr;
  int32_t device;
  uint64_t reset_epoch;
};

bool same_epoch(int32_t device, uint64_t reset_epoch) {
  uint64_t now = 0;
  return sim_device_reset_epoch(device, &now) == SIMPLER_OK && now == reset_epoch;
}

void free_job(void* pending) {
  auto* job = static_cast<PendingFree*>(pending);
  if (same_epoch(job->device, job->reset_epoch)) (void)sim_free(job->ptr);
  delete job;
}

const char* buffer_format(DataType dtype) {
  switch (dtype) {
    case DataType::FLOAT32:
      return "f";
    case DataType::FLOAT16:
      return "e";
    case DataType::FLOAT64:
      return "d";
    case DataType::INT8:
      return "b";
    case DataType::INT16:
      return "h";
    case DataType::INT32:
      return "i";
    case DataType::INT64:
      return "q";
    case DataType::UINT8:
      return "B";
    case DataType::UINT16:
    case DataType::BFLOAT16:  // numpy has no bfloat16: the items show as uint16
      return "H";
    case DataType::UINT32:
      return "I";
    case DataType::UINT64:
      return "Q";
    case DataType::BOOL:
      return "?";
  }
  return "B";
}

// shape's byte size (0 when a dimension is 0), or a ValueError when it exceeds 2^63 - 1.
uint64_t tensor_nbytes_checked(const std::vector<int64_t>& shape, uint64_t element_bytes) {
  for (int64_t d : shape) {
    if (d == 0) return 0;
  }
  uint64_t bytes = element_bytes;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
        bytes > static_cast<uint64_t>(INT64_MAX)) {
      throw py::value_error("DeviceArray: the byte size of the shape overflows 63 bits");
    }
  }
  return bytes;
}

py::tuple shape_tuple(const std::vector<int64_t>& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = shape[i];
  return t;
}

}  // namespace

DeviceArray::DeviceArray(std::vector<int64_t> shape, DataType dtype, py::object stream)
    : shape_(std::move(shape)), dtype_(dtype), stream_(std::move(stream)) {
  if (shape_.empty() || shape_.size() > CHIP_TENSOR_MAX_DIMS) {
    throw py::value_error("DeviceArray: shape needs 1.." + std::to_string(CHIP_TENSOR_MAX_DIMS) +
                          " dimensions, got " + std::to_string(shape_.size()));
  }
  for (int64_t d : shape_) {
    if (d < 0) throw py::value_error("DeviceArray: negative dimension " + std::to_string(d));
  }
  // An overflowing size would wrap to a small allocation behind a huge shape.
  nbytes_ = tensor_nbytes_checked(shape_, element_size(dtype_));
  stream_handle_ = stream_of(stream_);
  if (int st = sim_get_device(&device_); st != SIMPLER_OK)
    raise_sim("DeviceArray: sim_get_device", st);
  if (stream_handle_ != nullptr) {
    int32_t stream_device = -1;
    if (int st = sim_stream_device(stream_handle_, &stream_device); st != SIMPLER_OK)
      raise_sim("DeviceArray: sim_stream_device", st);
    if (stream_device != device_) {
      throw py::value_error("DeviceArray: the stream belongs to device " +
                            std::to_string(stream_device) + ", the current device is " +
                            std::to_string(device_));
    }
  }
  if (int st = sim_device_reset_epoch(device_, &reset_epoch_); st != SIMPLER_OK)
    raise_sim("DeviceArray: sim_device_reset_epoch", st);
  void* p = nullptr;
  // An empty array still owns a minimal allocation, so its pointer is a live device address.
  if (int st = sim_malloc(&p, nbytes_ == 0 ? 1 : nbytes_); st != SIMPLER_OK)
    raise_sim("DeviceArray: sim_malloc(" + std::to_string(nbytes_) + ")", st);
  ptr_ = reinterpret_cast<uint64_t>(p);
  try {
    tensor_ = make_device_tensor();
    tensor_made_ = true;
  } catch (const std::exception&) {
    // Not cached: tensor_if_live makes it again and reports the refusal where it is used.
  }
}

DeviceArray::~DeviceArray() { free(); }

bool DeviceArray::live() const { return ptr_ != 0 && same_epoch(device_, reset_epoch_); }

void DeviceArray::free() {
  if (!live()) {  // freed already, or the device reset took the memory
    ptr_ = 0;
    return;
  }
  void* p = reinterpret_cast<void*>(ptr_);
  ptr_ = 0;
  if (stream_handle_ != nullptr) {
    auto* job = new PendingFree{p, device_, reset_epoch_};
    if (sim_launch_device_job(stream_handle_, &no_work, job, &free_job) == SIMPLER_OK) {
      return;  // freed by the stream once the work queued before it has run
    }
    delete job;
  }
  // No stream, or it is gone (destroyed streams have finished their work).
  (void)sim_free(p);
}

ChipTensor DeviceArray::make_device_tensor() const {
  return make_tensor(ptr_, shape_, dtype_, AddressSpace::DEVICE, nbytes_ == 0 ? 1 : nbytes_);
}

bool DeviceArray::tensor_if_live(ChipTensor* out) const {
  if (!live()) return false;
  *out = tensor_made_ ? tensor_ : make_device_tensor();
  return true;
}

ChipTensor DeviceArray::tensor() const {
  ChipTensor t{};
  if (!tensor_if_live(&t)) {
    throw py::value_error(
        "DeviceArray: the array was freed (free(), or sim.device_reset of its device)");
  }
  return t;
}

void bind_device_array(py::module_& sim) {
  py::class_<DeviceArray>(sim, "DeviceArray", py::buffer_protocol(),
                          "Native core of simpler.sim.DeviceArray (use that class).")
      .def(py::init<std::vector<int64_t>, DataType, py::object>(), py::arg("shape"),
           py::arg("dtype"), py::arg("stream") = py::none())
      .def_property_readonly("ptr", &DeviceArray::ptr, "Device address (0 once freed).")
      .def_property_readonly("nbytes", &DeviceArray::nbytes)
      .def_property_readonly("device", &DeviceArray::device)
      .def_property_readonly("data_type", &DeviceArray::dtype, "The simpler DataType.")
      .def_property_readonly("shape", [](const DeviceArray& a) { return shape_tuple(a.shape()); })
      .def_property_readonly("stream", &DeviceArray::stream)
      .def("free", &DeviceArray::free,
           "Free now (stream-ordered when tied to a stream); idempotent.")
      .def(
          "__dlpack__",
          [](const py::object& self, const py::object& stream) {
            const auto& a = self.cast<const DeviceArray&>();
            if (!stream.is_none() && !PyLong_Check(stream.ptr())) {
              throw py::type_error("DeviceArray.__dlpack__: stream must be None or an int");
            }
            if (a.ptr() == 0)
              throw py::value_error(
                  "DeviceArray: the array was freed (free(), or sim.device_reset of its device)");
            return dlpack_export(self, a.ptr(), a.shape(), a.dtype(), kSimDLDeviceType, a.device());
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const DeviceArray& a) { return py::make_tuple(kSimDLDeviceType, a.device()); })
      .def_buffer([](DeviceArray& a) {
        // pybind11 cannot raise from here (a throw terminates the process): a freed or
        // reset array exports an empty read-only buffer, never its stale address.
        // DeviceArray.numpy() raises a ValueError before it gets here.
        if (a.ptr() == 0) {
          return py::buffer_info(nullptr, static_cast<py::ssize_t>(element_size(a.dtype())),
                                 buffer_format(a.dtype()), 1, {py::ssize_t{0}},
                                 {static_cast<py::ssize_t>(element_size(a.dtype()))}, true);
        }
        const auto item = static_cast<py::ssize_t>(element_size(a.dtype()));
        std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
        std::vector<py::ssize_t> strides(shape.size());
        py::ssize_t stride = item;
        for (size_t d = shape.size(); d-- > 0;) {
          strides[d] = stride;
          stride *= shape[d];
        }
        return py::buffer_info(reinterpret_cast<void*>(a.ptr()), item, buffer_format(a.dtype()),
                               static_cast<py::ssize_t>(shape.size()), shape, strides);
      });
}

}  // namespace simpler::python
