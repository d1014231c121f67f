// The C++ object behind a Python object of the bound class T (or of a Python subclass
// whose only bound base is T, like simpler.sim.DeviceArray), without pybind11's per-call
// type lookups: isinstance + cast hash the C++ type's name each time, which cost more
// than the rest of a borrowed kernel launch. Anything else gives nullptr, and callers
// take the general path.
#pragma once

#include <pybind11/pybind11.h>

#include <typeinfo>
#include <vector>

namespace simpler::python {

template <class T>
T* bound_instance(pybind11::handle obj) {
  namespace detail = pybind11::detail;
  // Looked up once, after the module registered T (callers run after module init). The
  // last accepted subclass is remembered; both statics are only touched under the GIL.
  static const detail::type_info* const info = detail::get_type_info(typeid(T));
  static PyTypeObject* subclass = nullptr;
  if (info == nullptr) return nullptr;
  PyTypeObject* type = Py_TYPE(obj.ptr());
  if (type != info->type && type != subclass) {
    if (PyType_IsSubtype(type, info->type) == 0) return nullptr;
    const std::vector<detail::type_info*>& bound = detail::all_type_info(type);
    if (bound.size() != 1 || bound[0] != info) return nullptr;
    subclass = type;
  }
  auto* inst = reinterpret_cast<detail::instance*>(obj.ptr());
  // One bound base: its value is the instance's only slot (null while not constructed).
  if (!inst->simple_layout) return nullptr;
  return detail::value_and_holder(inst, info, 0, 0).template value_ptr<T>();
}

}  // namespace simpler::python
