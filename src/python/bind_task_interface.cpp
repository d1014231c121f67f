// simpler._native.task_interface: the task-interface types (see task_interface_types.h).
#include "bindings.h"
#include "task_interface_types.h"

namespace simpler::python {

void bind_task_interface(pybind11::module_& m) {
  auto ti =
      m.def_submodule("task_interface", "Task-interface types (wrapped by simpler.task_interface)");
  ti.attr("CHIP_TENSOR_MAX_DIMS") = CHIP_TENSOR_MAX_DIMS;
  ti.attr("CHIP_MAX_TENSOR_ARGS") = CHIP_MAX_TENSOR_ARGS;
  ti.attr("CHIP_MAX_SCALAR_ARGS") = CHIP_MAX_SCALAR_ARGS;
  ti.attr("CHIP_MAX_SIGNATURE") = CHIP_MAX_SIGNATURE;
  ti.attr("CHIP_MAX_FUNC_ID") = CHIP_MAX_FUNC_ID;
  ti.attr("CHIP_MAX_FUNC_NAME") = CHIP_MAX_FUNC_NAME;
  ti.attr("SIMPLER_OUTPUT_PREFIX_MAX") = SIMPLER_OUTPUT_PREFIX_MAX;
  detail::bind_task_interface_enums(ti);
  detail::bind_task_interface_tensor(ti);
  detail::bind_task_interface_args(ti);
  detail::bind_task_interface_config(ti);
  detail::bind_task_interface_callables(ti);
}

}  // namespace simpler::python
