// simpler._native.task_interface: the task-interface types (see task_interface_types.h).
#include "bindings.h"
#include "call_mismatch.h"
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
  // Last, once every method is bound: a call that fits none is a SimplerTypeError.
  detail::translate_call_mismatches(
      ti.attr("ChipTensor"),
      "has no constructor; make one with ChipTensor.make(ptr, shape, "
      "dtype) (device memory) or ChipTensor.from_array(array) (host)");
  for (const char* name : {"DataType", "ArgDirection", "AddressSpace", "ChipStorageTaskArgs",
                           "CallConfig", "ArgSpec"}) {
    detail::translate_call_mismatches(ti.attr(name));
  }
  detail::translate_call_mismatches(
      ti.attr("CoreCallable"),
      "has no constructor; make one with CoreCallable.build(signature, "
      "binary) or CoreCallable.from_bytes(image)");
  detail::translate_call_mismatches(
      ti.attr("ChipCallable"),
      "has no constructor; make one with ChipCallable.build(...), "
      "ChipCallable.from_kernel(kernel) or ChipCallable.from_bytes(image)");
}

}  // namespace simpler::python
