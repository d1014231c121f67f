// Placeholder until the worker layer binds itself (its owner replaces this file).
#include "bindings.h"

namespace simpler::python {
void bind_worker(pybind11::module_& /*m*/) {}
}  // namespace simpler::python
