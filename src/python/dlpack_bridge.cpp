#include "dlpack_bridge.h"

#include <string>

#include "element_kind.h"

namespace py = pybind11;

namespace simpler::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";
constexpr uint8_t kDLBoolCode = 6;  // kDLBool of DLPack >= 0.8 (absent from Debian's 0.6)

struct ExportContext {
  PyObject* owner;
  std::vector<int64_t> shape;
};

void delete_export(DLManagedTensor* self) {
  auto* ctx = static_cast<ExportContext*>(self->manager_ctx);
  {
    py::gil_scoped_acquire gil;  // consumers may call the deleter from any thread
    Py_XDECREF(ctx->owner);
  }
  delete ctx;
  delete self;
}

// An unconsumed capsule still owns its tensor; a consumed one was renamed.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);
}

bool row_major_compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

}  // namespace

std::optional<DataType> data_type_of(DLDataType t) {
  if (t.lanes != 1 || t.bits % 8 != 0) return std::nullopt;
  const size_t bytes = t.bits / 8;
  switch (t.code) {
    case kDLFloat:
      return data_type_of_kind(ElementKind::kFloat, bytes);
    case kDLBfloat:
      return data_type_of_kind(ElementKind::kBfloat, bytes);
    case kDLInt:
      return data_type_of_kind(ElementKind::kInt, bytes);
    case kDLUInt:
      return data_type_of_kind(ElementKind::kUInt, bytes);
    case kDLBoolCode:
      return data_type_of_kind(ElementKind::kBool, bytes);
    default:
      return std::nullopt;
  }
}

DLDataType dl_data_type_of(DataType dtype) {
  const auto bits = static_cast<uint8_t>(element_size(dtype) * 8);
  switch (dtype) {
    case DataType::FLOAT16:
    case DataType::FLOAT32:
    case DataType::FLOAT64:
      return {kDLFloat, bits, 1};
    case DataType::BFLOAT16:
      return {kDLBfloat, bits, 1};
    case DataType::INT8:
    case DataType::INT16:
    case DataType::INT32:
    case DataType::INT64:
      return {kDLInt, bits, 1};
    default:  // unsigned and BOOL
      return {kDLUInt, bits, 1};
  }
}

std::pair<int32_t, int32_t> dlpack_device(py::handle obj) {
  py::tuple device = obj.attr("__dlpack_device__")();
  // A cast_error: the caller names the argument it came from.
  if (device.size() != 2) throw py::cast_error("__dlpack_device__() must return a 2-tuple");
  return {device[0].cast<int32_t>(), device[1].cast<int32_t>()};
}

DLPackView dlpack_borrow(py::handle obj) {
  py::object capsule = obj.attr("__dlpack__")();
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsuleName)) {
    throw py::type_error(std::string("__dlpack__() of ") + Py_TYPE(obj.ptr())->tp_name +
                         " did not return a 'dltensor' capsule");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  // Consumed: the capsule no longer deletes it; we do, once the fields are copied.
  PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);
  DLPackView v;
  const DLTensor& t = managed->dl_tensor;
  v.device_type = t.device.device_type;
  v.device_id = t.device.device_id;
  v.data = reinterpret_cast<uint64_t>(t.data) + t.byte_offset;
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.compact = row_major_compact(t);
  v.dl_dtype = t.dtype;
  v.dtype = data_type_of(t.dtype);
  if (managed->deleter != nullptr) managed->deleter(managed);
  return v;
}

py::capsule dlpack_export(py::handle owner, uint64_t data, const std::vector<int64_t>& shape,
                          DataType dtype, int32_t device_type, int32_t device_id) {
  auto ctx = std::make_unique<ExportContext>(ExportContext{owner.ptr(), shape});
  auto managed = std::make_unique<DLManagedTensor>();
  DLTensor& t = managed->dl_tensor;
  t.data = reinterpret_cast<void*>(data);
  t.device = {static_cast<DLDeviceType>(device_type), device_id};
  t.ndim = static_cast<int32_t>(ctx->shape.size());
  t.dtype = dl_data_type_of(dtype);
  t.shape = ctx->shape.data();
  t.strides = nullptr;  // compact row-major
  t.byte_offset = 0;
  managed->manager_ctx = ctx.get();
  managed->deleter = &delete_export;
  PyObject* capsule = PyCapsule_New(managed.get(), kCapsuleName, &capsule_destructor);
  if (capsule == nullptr) throw py::error_already_set();
  Py_INCREF(owner.ptr());  // released by delete_export
  (void)ctx.release();     // owned by the capsule from here on
  (void)managed.release();
  return py::reinterpret_steal<py::capsule>(capsule);
}

}  // namespace simpler::python
