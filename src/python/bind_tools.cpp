// Placeholder until the tools layer binds itself (its owner replaces this file).
#include "bindings.h"

namespace simpler::python {
void bind_tools(pybind11::module_& /*m*/) {}
}  // namespace simpler::python
