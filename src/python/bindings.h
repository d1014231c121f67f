// Entry points of the per-layer binding files of simpler._native.
#pragma once
#include <pybind11/pybind11.h>

namespace simpler::python {
void bind_errors(pybind11::module_& m);          // bind_errors.cpp: errors under SimplerError
void bind_status(pybind11::module_& m);          // bind_status.cpp: status codes and names
void bind_task_interface(pybind11::module_& m);  // bind_task_interface.cpp
void bind_sim(pybind11::module_& m);             // bind_sim.cpp: simpler.sim driver calls
void bind_tools(pybind11::module_& m);   // bind_tools.cpp: runtime-build locator, KernelCompiler
void bind_worker(pybind11::module_& m);  // bind_worker.cpp: ChipWorker, Worker
void bind_log(pybind11::module_& m);     // bind_log.cpp: native log sink -> logging
}  // namespace simpler::python
