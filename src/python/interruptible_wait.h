// Blocking waits that Ctrl-C can interrupt (simpler._native bindings).
//
// A wait that released the GIL for its whole length would see a SIGINT only when it ended:
// Python runs signal handlers on the main thread, between bytecodes. These waits sleep
// in slices with the GIL released and run the pending handlers between slices
// (PyErr_CheckSignals), so KeyboardInterrupt is raised within one slice. The waited-for
// work is not cancelled: it keeps running.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>

namespace simpler::python {

inline constexpr std::chrono::microseconds kInterruptSlice{50'000};

// Calls `try_wait(slice)` (GIL released) until it returns true; between calls runs the
// signal handlers and throws py::error_already_set if one raised (KeyboardInterrupt).
template <typename TryWait>
void wait_interruptibly(TryWait&& try_wait) {
  for (;;) {
    bool done = false;
    {
      pybind11::gil_scoped_release nogil;
      done = try_wait(kInterruptSlice);
    }
    if (done) return;
    if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }
}

}  // namespace simpler::python
