// Pickling and copying of bound objects that name memory or handles of this process.
#pragma once

#include <pybind11/pybind11.h>

namespace simpler::python {

// pickle (and copy.deepcopy, and copy.copy unless the class defines __copy__) refuse `cls`
// with a SimplerTypeError: an address or a handle means nothing in another process, and a
// deep copy could not copy memory the object only names. `message` says so and what to do.
template <class Class>
void refuse_pickling(Class& cls, const char* message) {
  cls.def("__reduce_ex__", [message](pybind11::handle, pybind11::handle) -> pybind11::object {
    throw pybind11::type_error(message);
  });
}

// copy.copy(obj): a copy of the descriptor (value type), sharing what it keeps alive.
template <class Class>
void copy_as_value(Class& cls) {
  using T = typename Class::type;
  cls.def("__copy__", [](const T& self) { return T(self); });
}

}  // namespace simpler::python
