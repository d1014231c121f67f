// Placeholder until the task_interface layer binds itself (its owner replaces this file).
#include "bindings.h"

namespace simpler::python {
void bind_task_interface(pybind11::module_& /*m*/) {}
}  // namespace simpler::python
