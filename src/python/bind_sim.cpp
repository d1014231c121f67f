// Placeholder until the sim layer binds itself (its owner replaces this file).
#include "bindings.h"

namespace simpler::python {
void bind_sim(pybind11::module_& /*m*/) {}
}  // namespace simpler::python
