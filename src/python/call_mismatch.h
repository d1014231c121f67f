// A call that fits no overload (an unknown keyword, a missing or extra argument, a wrong
// `self`, a property set to a value of the wrong type) is refused by pybind11 itself with a
// plain TypeError ("incompatible function arguments"), past the exception translators.
// translate_call_mismatches makes that refusal a SimplerTypeError (.code) saying what did
// not fit and how to call it; the analysis is simpler._typed_call's, the one the Python
// layer's own functions use.
//
// It wraps each method's dispatcher: the wrapper calls pybind11's and calls into Python
// only when that returned an error. A call that fits costs one more C call, nothing else
// (no Python wrapper, which would cost level 3's transport a Python call per task; no
// extra overload, which would make pybind11 resolve every call in two passes).
#pragma once

#include <pybind11/pybind11.h>

namespace simpler::python::detail {

// For every public method, static method, __init__ and property setter of `cls` bound by
// pybind11; a read-only property's assignment becomes a SimplerAttributeError saying so. A
// class with no constructor gets an __init__ that raises `no_constructor` as a
// SimplerTypeError (instead of pybind11's "No constructor defined!").
void translate_call_mismatches(pybind11::handle cls, const char* no_constructor = nullptr);

}  // namespace simpler::python::detail
