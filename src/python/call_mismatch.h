// A call that fits no overload (an unknown keyword, a missing or extra argument, a wrong
// `self`) is refused by pybind11 itself with a plain TypeError ("incompatible function
// arguments"), past the exception translators. translate_call_mismatches makes that refusal
// a SimplerTypeError (.code) saying what did not fit and showing the signature.
//
// It wraps each method's dispatcher: the wrapper calls pybind11's and looks at the error
// only when that returned one. A call that fits costs one more C call, nothing else (no
// Python wrapper, which would cost level 3's transport a Python call per task; no extra
// overload, which would make pybind11 resolve every call in two passes).
#pragma once

#include <pybind11/pybind11.h>

namespace simpler::python::detail {

// For every public method, static method and __init__ of `cls` bound by pybind11. A class
// with no constructor gets an __init__ that raises `no_constructor` as a SimplerTypeError
// (instead of pybind11's "No constructor defined!").
void translate_call_mismatches(pybind11::handle cls, const char* no_constructor = nullptr);

}  // namespace simpler::python::detail
