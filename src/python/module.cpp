// simpler._native: the one pybind11 module; each layer binds itself in its own file.
#include <pybind11/pybind11.h>

#include "bindings.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "simpler native layer (task interface, simulated driver, workers)";
  simpler::python::bind_errors(m);  // first: the layers' own translators take precedence
  simpler::python::bind_status(m);
  simpler::python::bind_task_interface(m);
  simpler::python::bind_sim(m);
  simpler::python::bind_tools(m);
  simpler::python::bind_worker(m);
  simpler::python::bind_log(m);
}
