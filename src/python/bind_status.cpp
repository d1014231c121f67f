// Status codes and names, generated from the one list (SIMPLER_STATUS_LIST in abi/status.h).
#include "bindings.h"
#include "simpler/abi/status.h"

namespace simpler::python {

void bind_status(pybind11::module_& m) {
  m.def(
      "status_name", [](int code) { return simpler_status_name(code); },
      "Name of any native status code.");
  m.def(
      "status_meaning", [](int code) { return simpler_status_meaning(code); },
      "One sentence on what a native status code means (\"\" when unknown).");
  // Every status, in list order: name -> code. Python derives its constants from this.
  pybind11::dict codes;
#define SIMPLER_STATUS_ENTRY_(name, value, meaning) codes[#name] = static_cast<int>(value);
  SIMPLER_STATUS_LIST(SIMPLER_STATUS_ENTRY_)
#undef SIMPLER_STATUS_ENTRY_
  m.attr("STATUS_CODES") = codes;
  for (auto item : codes) m.attr(item.first) = item.second;
  m.attr("PTO_RUNTIME_ERR_BASE") = static_cast<int>(PTO_RUNTIME_ERR_BASE);
  m.attr("SIM_ERR_BASE") = static_cast<int>(SIM_ERR_BASE);
}

}  // namespace simpler::python
