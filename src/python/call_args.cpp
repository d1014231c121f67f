#include "call_args.h"

#include <memory>
#include <optional>
#include <string>

#include <pybind11/numpy.h>

#include "bound_instance.h"
#include "device_array.h"
#include "dlpack_bridge.h"
#include "simpler/sim/sim_driver.h"
#include "support/counted.h"

namespace py = pybind11;

namespace simpler::python {
namespace detail {
namespace {

std::string where(const PackTarget& t, uint32_t i, const ArgSpec& spec) {
  return std::string(t.api) + ": argument " + std::to_string(i) + " (" + arg_spec_text(spec) + ")";
}

}  // namespace

[[noreturn]] void bad_value(const PackTarget& t, uint32_t i, const ArgSpec& spec,
                            const std::string& why) {
  throw CallArgError(static_cast<int>(i), false, where(t, i, spec) + ": " + why);
}

[[noreturn]] void bad_type(const PackTarget& t, uint32_t i, const ArgSpec& spec,
                           const std::string& why) {
  throw CallArgError(static_cast<int>(i), true, where(t, i, spec) + ": " + why);
}

// A heap type's tp_name is bare ("Tensor"): name its module too ("torch.Tensor"), but not
// for builtins or simpler's own classes, whose names are already plain.
std::string type_name(py::handle obj) {
  PyTypeObject* type = Py_TYPE(obj.ptr());
  std::string name = type->tp_name;
  if (name.find('.') != std::string::npos) return name;
  const py::object module =
      py::getattr(reinterpret_cast<PyObject*>(type), "__module__", py::none());
  if (!py::isinstance<py::str>(module)) return name;
  const auto prefix = module.cast<std::string>();
  if (prefix == "builtins" || prefix.rfind("simpler", 0) == 0) return name;
  return prefix + "." + name;
}

}  // namespace detail

namespace {

using detail::bad_type;
using detail::bad_value;
using detail::pack_scalar;
using detail::type_name;

bool is_tensor_direction(ArgDirection d) { return d != ArgDirection::SCALAR; }

// ---- tensors -------------------------------------------------------------------------

struct PackedTensor {
  ChipTensor tensor{};
  std::shared_ptr<const HostBufferLease> host;  // set for HOST tensors (program mode)
};

void check_dtype(const PackTarget& t, uint32_t i, const ArgSpec& spec, DataType given) {
  if (spec.dtype && *spec.dtype != given) {
    // numpy has no bfloat16: its users hold such data as uint16.
    const bool bf16_as_u16 = *spec.dtype == DataType::BFLOAT16 && given == DataType::UINT16;
    bad_type(t, i, spec,
             std::string("expected a ") + data_type_name(*spec.dtype) + " tensor, got " +
                 data_type_name(given) +
                 (bf16_as_u16 ? " (numpy has no bfloat16: pass ChipTensor.from_array(a, "
                                "dtype=DataType.BFLOAT16), a bfloat16 sim.DeviceArray or a "
                                "torch bfloat16 tensor)"
                              : ""));
  }
}

void check_rank(const PackTarget& t, uint32_t i, const ArgSpec& spec, const ChipTensor& tensor) {
  if (spec.rank != 0 && tensor.ndims != spec.rank) {
    bad_type(t, i, spec,
             "expected a tensor of rank " + std::to_string(spec.rank) + ", got rank " +
                 std::to_string(tensor.ndims));
  }
}

void check_device(const PackTarget& t, uint32_t i, const ArgSpec& spec, int32_t device) {
  if (device != t.device) {
    bad_value(t, i, spec,
              "the tensor lives on sim device " + std::to_string(device) +
                  ", the worker uses device " + std::to_string(t.device) +
                  " (allocate it there, or copy it with sim.memcpy_dtod)");
  }
}

// Whether [addr, addr + bytes) is sim device memory: the owning device, or -1 for host
// memory. A range that starts inside an allocation and runs past it is refused.
int32_t sim_owner(const PackTarget& t, uint32_t i, const ArgSpec& spec, uint64_t addr,
                  uint64_t bytes) {
  int32_t owner = -1;
  const int st = sim_pointer_device(reinterpret_cast<const void*>(addr), bytes, &owner);
  if (st == SIMPLER_OK) return owner;
  if (st == SIM_ERR_OUT_OF_RANGE) {
    bad_value(t, i, spec, "the tensor's bytes run past the end of their sim device allocation");
  }
  return -1;
}

void finish_tensor(const PackTarget& t, uint32_t i, const ArgSpec& spec, PackedTensor& p) {
  check_rank(t, i, spec, p.tensor);
  try {
    validate_tensor(p.tensor);
  } catch (const TaskInterfaceError& e) {
    bad_value(t, i, spec, e.what());
  }
}

[[noreturn]] void refuse_host(const PackTarget& t, uint32_t i, const ArgSpec& spec,
                              py::handle obj) {
  bad_value(t, i, spec,
            std::string("a host array (") + type_name(obj) +
                ") in kernel mode; kernel mode takes device memory only: copy it to the device "
                "first (simpler.sim.DeviceArray.from_numpy(a), or sim.malloc + "
                "sim.memcpy_htod)");
}

// A buffer-protocol object (numpy array, memoryview, ...): sim device memory when its bytes
// lie in a sim allocation, else host memory (program mode only).
// dlpack_host: a numpy import of a DLPack host tensor; numpy marks those read-only, but
// DLPack (0.6) carries no read-only flag, so writability is the producer's to decide.
// shown: what the caller passed (a DLPack producer such as a torch tensor), for messages.
// as_dtype: the element type when the buffer's format cannot say it (a bfloat16 DLPack
// tensor, seen through numpy as uint16).
PackedTensor from_buffer(const PackTarget& t, uint32_t i, const ArgSpec& spec, py::handle obj,
                         bool dlpack_host = false, py::handle shown = py::handle(),
                         std::optional<DataType> as_dtype = std::nullopt) {
  auto lease = std::make_shared<const HostBufferLease>(obj, dlpack_host);
  const Py_buffer& v = lease->view();
  if (v.format && (v.format[0] == '>' || v.format[0] == '!')) {
    bad_value(t, i, spec, "big-endian data; the chip is little-endian");
  }
  const auto dtype =
      as_dtype ? as_dtype : detail::dtype_of_format(v.format, static_cast<size_t>(v.itemsize));
  if (!dtype) {
    bad_type(t, i, spec,
             std::string("buffer format '") + (v.format ? v.format : "B") + "' has no DataType");
  }
  check_dtype(t, i, spec, *dtype);
  if (!PyBuffer_IsContiguous(&v, 'C')) {
    bad_value(t, i, spec,
              "non-contiguous strides; pass a C-contiguous array (numpy.ascontiguousarray)");
  }
  if (v.ndim > CHIP_TENSOR_MAX_DIMS) {
    bad_value(t, i, spec,
              std::to_string(v.ndim) + " dimensions; at most " +
                  std::to_string(CHIP_TENSOR_MAX_DIMS) + " are supported");
  }
  const bool writes = spec.direction != ArgDirection::IN;
  if (writes && lease->readonly()) {
    bad_value(t, i, spec, "a read-only buffer cannot be an output; pass a writable array");
  }
  std::vector<int64_t> shape(v.shape, v.shape + v.ndim);
  if (shape.empty()) shape.push_back(1);  // a 0-d array is one element
  const auto addr = reinterpret_cast<uint64_t>(v.buf);
  const auto bytes = static_cast<uint64_t>(v.len);
  const int32_t owner = bytes == 0 ? -1 : sim_owner(t, i, spec, addr, bytes);
  PackedTensor p;
  if (owner >= 0) {  // a host view of sim device memory (e.g. DeviceArray.numpy())
    check_device(t, i, spec, owner);
    p.tensor = make_tensor(addr, shape, *dtype, AddressSpace::DEVICE, bytes);
  } else {
    if (t.mode == CallMode::KERNEL && bytes == 0) {
      // An empty view has no byte whose owner could be checked (not even a slice of a
      // DeviceArray), so it cannot be shown to be device memory.
      bad_value(t, i, spec,
                "an empty (0-byte) array; kernel mode takes device memory only, and an empty "
                "view has no byte to check: pass a non-empty view of device memory");
    }
    if (t.mode == CallMode::KERNEL) refuse_host(t, i, spec, shown ? shown : obj);
    p.tensor = make_tensor(addr, shape, *dtype, AddressSpace::HOST, bytes == 0 ? 1 : bytes);
    p.host = std::move(lease);
  }
  finish_tensor(t, i, spec, p);
  return p;
}

// What to pass instead of a producer whose export failed. torch refuses a tensor autograd
// tracks, and a dtype DLPack 0.6 lacks (bool): a fresh capsule would not help there, a
// detached tensor or the CPU tensor's numpy() view (buffer protocol) does.
std::string dlpack_failure_hint(py::handle obj) {
  const py::object grad = py::getattr(obj, "requires_grad", py::none());
  const int truth = PyObject_IsTrue(grad.ptr());
  if (truth < 0) PyErr_Clear();  // an odd producer: its own error is the one reported
  if (truth > 0)
    return "the tensor requires grad: pass tensor.detach() (the same memory, "
           "outside autograd)";
  if (PyCallable_Check(py::getattr(obj, "numpy", py::none()).ptr())) {
    return "pass the tensor's numpy() view instead (zero-copy for a CPU tensor)";
  }
  return "pass the tensor itself, whose __dlpack__() makes a fresh capsule for each import";
}

// The producer's own failure (an object handing out one capsule twice: a capsule is
// consumed by its first import; a __dlpack__ that raises or returns no capsule; a device
// that is not two ints; a torch tensor that requires grad) as an ArgumentError naming the
// argument, not a bare ValueError or pybind11's cast error. simpler's own typed errors
// pass through.
[[noreturn]] void refuse_dlpack_failure(const PackTarget& t, uint32_t i, const ArgSpec& spec,
                                        py::handle obj, py::error_already_set& e) {
  // Called from the handler of `e`: a rethrow keeps simpler's own typed error as it is.
  if (e.matches(py::module_::import("simpler.errors").attr("SimplerError"))) throw;
  const std::string why = py::str(e.type().attr("__name__")).cast<std::string>() + ": " +
                          py::str(e.value()).cast<std::string>();
  bad_value(t, i, spec,
            "its DLPack export could not be read (" + why + "); " + dlpack_failure_hint(obj));
}

template <typename Read>
auto read_dlpack(const PackTarget& t, uint32_t i, const ArgSpec& spec, py::handle obj,
                 Read&& read) {
  try {
    return read();
  } catch (py::error_already_set& e) {
    refuse_dlpack_failure(t, i, spec, obj, e);
  } catch (const py::cast_error& e) {
    bad_value(t, i, spec,
              std::string("its __dlpack_device__() is not two ints (") + e.what() + ")");
  }
}

// A compact CPU bfloat16 DLPack tensor as a numpy uint16 array over the same bytes, which
// keeps `obj` (the producer, owner of the memory) alive; None for anything else.
py::object cpu_bfloat16_as_uint16(const PackTarget& t, uint32_t i, const ArgSpec& spec,
                                  py::handle obj) {
  DLPackView v;
  try {
    v = dlpack_borrow(obj);          // a second export: the producer makes a fresh capsule
  } catch (const std::exception&) {  // its first failure is the one reported
    return py::object();
  }
  if (v.device_type != kDLCPU || v.dtype != DataType::BFLOAT16) return py::object();
  if (!v.compact) bad_value(t, i, spec, "non-contiguous strides; pass a C-contiguous tensor");
  static const uint16_t kNoElement = 0;  // numpy wants a pointer even for zero elements
  const void* data = v.data != 0 ? reinterpret_cast<const void*>(v.data) : &kNoElement;
  return py::array(py::dtype("uint16"), v.shape, data, obj);
}

PackedTensor from_dlpack(const PackTarget& t, uint32_t i, const ArgSpec& spec, py::handle obj) {
  const auto [device_type, device_id] =
      read_dlpack(t, i, spec, obj, [&] { return dlpack_device(obj); });
  if (device_type == kDLCPU) {
    // Host memory or a CPU view of sim memory: numpy imports it zero-copy, then the buffer
    // rules apply (the numpy array keeps the producer's export alive).
    py::object array;
    try {
      array = py::module_::import("numpy").attr("from_dlpack")(obj);
    } catch (py::error_already_set& e) {
      // numpy has no bfloat16: such a tensor is read through DLPack itself.
      py::object bf16 = cpu_bfloat16_as_uint16(t, i, spec, obj);
      if (!bf16) refuse_dlpack_failure(t, i, spec, obj, e);
      return from_buffer(t, i, spec, bf16, /*dlpack_host=*/true, obj, DataType::BFLOAT16);
    }
    return from_buffer(t, i, spec, array, /*dlpack_host=*/true, obj);
  }
  if (device_type != kSimDLDeviceType) {
    bad_value(t, i, spec,
              "a tensor on DLPack device type " + std::to_string(device_type) +
                  "; simpler takes the simulated device (kDLExtDev = " +
                  std::to_string(kSimDLDeviceType) + ") or CPU memory");
  }
  check_device(t, i, spec, device_id);
  const DLPackView v = read_dlpack(t, i, spec, obj, [&] { return dlpack_borrow(obj); });
  if (!v.dtype) {
    bad_type(t, i, spec,
             "DLPack dtype (code " + std::to_string(v.dl_dtype.code) + ", " +
                 std::to_string(v.dl_dtype.bits) + " bits, " + std::to_string(v.dl_dtype.lanes) +
                 " lanes) has no DataType");
  }
  check_dtype(t, i, spec, *v.dtype);
  if (!v.compact) {
    bad_value(t, i, spec, "non-contiguous strides; pass a C-contiguous tensor");
  }
  if (v.shape.size() > CHIP_TENSOR_MAX_DIMS) {
    bad_value(t, i, spec,
              std::to_string(v.shape.size()) + " dimensions; at most " +
                  std::to_string(CHIP_TENSOR_MAX_DIMS) + " are supported");
  }
  std::vector<int64_t> shape = v.shape;
  if (shape.empty()) shape.push_back(1);
  uint64_t bytes = element_size(*v.dtype);
  for (size_t d = 0; d < shape.size(); ++d) {
    // A producer's own shape: refused here, naming the argument, before it can wrap.
    if (shape[d] < 0) {
      bad_value(t, i, spec, "shape[" + std::to_string(d) + "] is " + std::to_string(shape[d]));
    }
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(shape[d]), &bytes)) {
      bad_value(t, i, spec, "its byte size overflows 64 bits");
    }
  }
  // An empty tensor still names one byte (its buffer, as the runtime checks it).
  const int32_t owner = sim_owner(t, i, spec, v.data, bytes == 0 ? 1 : bytes);
  if (owner < 0) {
    bad_value(t, i, spec, "its data is not inside a live sim device allocation");
  }
  check_device(t, i, spec, owner);
  PackedTensor p;
  p.tensor = make_tensor(v.data, shape, *v.dtype, AddressSpace::DEVICE, bytes == 0 ? 1 : bytes);
  finish_tensor(t, i, spec, p);
  return p;
}

PackedTensor pack_tensor(const PackTarget& t, uint32_t i, const ArgSpec& spec, py::handle obj) {
  const DeviceArray* exact = bound_instance<DeviceArray>(obj);
  if (exact != nullptr || py::isinstance<DeviceArray>(obj)) {  // the fast path: no Python call
    const auto& a = exact != nullptr ? *exact : obj.cast<const DeviceArray&>();
    PackedTensor p{ChipTensor{}, nullptr};
    if (!a.tensor_if_live(&p.tensor)) {
      bad_value(t, i, spec, "the DeviceArray was freed (or its device was reset)");
    }
    check_device(t, i, spec, a.device());
    check_dtype(t, i, spec, a.dtype());
    check_rank(t, i, spec, p.tensor);
    return p;
  }
  if (py::isinstance<PyChipTensor>(obj)) {
    const auto& c = obj.cast<const PyChipTensor&>();
    if (is_valid_data_type(c.tensor.dtype))
      check_dtype(t, i, spec, static_cast<DataType>(c.tensor.dtype));
    if (c.tensor.space == CHIP_SPACE_HOST) {
      if (t.mode == CallMode::KERNEL) refuse_host(t, i, spec, obj);
      if (spec.direction != ArgDirection::IN && c.host && c.host->readonly()) {
        bad_value(t, i, spec, "a read-only buffer cannot be an output; pass a writable array");
      }
    }
    check_rank(t, i, spec, c.tensor);
    return {c.tensor, c.host};
  }
  if (PyObject_CheckBuffer(obj.ptr())) return from_buffer(t, i, spec, obj);
  if (py::hasattr(obj, "__dlpack__") && py::hasattr(obj, "__dlpack_device__")) {
    return from_dlpack(t, i, spec, obj);
  }
  bad_type(t, i, spec,
           std::string("expected a tensor (sim.DeviceArray, ChipTensor, a DLPack tensor on the "
                       "simulated device") +
               (t.mode == CallMode::PROGRAM ? ", or a host array" : "") + "), got " +
               type_name(obj));
}

std::string signature_text(std::span<const ArgSpec> sig) {
  std::string s;
  for (const auto& a : sig) s += (s.empty() ? "" : ", ") + arg_spec_text(a);
  return "(" + s + ")";
}

void check_signature_order(std::span<const ArgSpec> sig, const PackTarget& t) {
  bool seen_scalar = false;
  for (const auto& a : sig) {
    if (a.direction == ArgDirection::SCALAR)
      seen_scalar = true;
    else if (seen_scalar) {
      throw CallArgError(-1, false,
                         std::string(t.api) + ": the callable's signature " + signature_text(sig) +
                             " has a tensor after a scalar; pass a ChipStorageTaskArgs");
    }
  }
}

// By value: the signature pybind11::register_exception_translator takes.
void translate(std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
  try {
    if (p) std::rethrow_exception(p);
  } catch (const CallArgError& e) {
    py::object errors = py::module_::import("simpler.errors");
    py::object cls = errors.attr(e.type_error() ? "ArgumentTypeError" : "ArgumentError");
    py::object index = py::none();
    if (e.index() >= 0) index = py::int_(e.index());
    PyErr_SetObject(cls.ptr(), cls(e.what(), index).ptr());
  }
}

}  // namespace

bool is_argument_list(py::handle obj) {
  return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr());
}

void pack_call_args(py::handle values, std::span<const ArgSpec> signature, const PackTarget& target,
                    PyChipStorageTaskArgs& out) {
  const auto n = static_cast<size_t>(PySequence_Fast_GET_SIZE(values.ptr()));
  if (n != signature.size()) {
    throw CallArgError(
        -1, true,
        std::string(target.api) + ": the callable's signature " + signature_text(signature) +
            " takes " + support::counted(signature.size(), "argument") + ", " + std::to_string(n) +
            " given; pass them in signature order (or one ChipStorageTaskArgs)");
  }
  check_signature_order(signature, target);
  // Filled in place (no 4 KiB temporary per launch); on a refusal `out` is partly written,
  // which callers never use: they pack into a fresh object.
  PyChipStorageTaskArgs& packed = out;
  packed.args.tensor_count = 0;
  packed.args.scalar_count = 0;
  packed.host.clear();
  for (uint32_t i = 0; i < n; ++i) {
    const ArgSpec& spec = signature[i];
    py::handle value = PySequence_Fast_GET_ITEM(values.ptr(), i);
    if (is_tensor_direction(spec.direction)) {
      PackedTensor p = pack_tensor(target, i, spec, value);
      packed.args.tensors[packed.args.tensor_count++] = p.tensor;
      packed.host.push_back(std::move(p.host));
    } else {
      packed.args.scalars[packed.args.scalar_count++] = pack_scalar(target, i, spec, value);
    }
  }
}

void repack_call_arg(uint32_t index, py::handle value, std::span<const ArgSpec> signature,
                     const PackTarget& target, PyChipStorageTaskArgs& out) {
  if (index >= signature.size()) {
    throw CallArgError(static_cast<int>(index), false,
                       std::string(target.api) + ": argument index " + std::to_string(index) +
                           " is out of range (the signature has " +
                           support::counted(signature.size(), "argument") + ")");
  }
  const ArgSpec& spec = signature[index];
  if (is_tensor_direction(spec.direction)) {
    PackedTensor p = pack_tensor(target, index, spec, value);
    out.args.tensors[index] = p.tensor;
    if (out.host.size() <= index) out.host.resize(index + 1);
    out.host[index] = std::move(p.host);
  } else {
    out.args.scalars[index - out.args.tensor_count] = pack_scalar(target, index, spec, value);
  }
}

void register_call_arg_errors() { py::register_exception_translator(&translate); }

}  // namespace simpler::python
