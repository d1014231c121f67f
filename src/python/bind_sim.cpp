// simpler._native.sim: the simulated driver's C API, one Python function per call.
// Failures raise simpler.errors.SimError(message, code). Pointers and handles are ints.
// Host data is any C-contiguous buffer-protocol object. Every call that can wait releases
// the GIL (a stream's host function may need it). The Python layer (simpler/sim.py) keeps
// objects handed to async calls alive until the stream ran them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "bindings.h"
#include "device_array.h"
#include "interruptible_wait.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"
#include "support/counted.h"

namespace py = pybind11;

namespace simpler::python {
namespace {

const char* hint_for(int status) {
  switch (status) {
    case SIM_ERR_INVALID_VALUE:
      return "an argument is null, zero or out of range";
    case SIM_ERR_INVALID_DEVICE:
      return "device id out of range; see simpler.sim.device_count()";
    case SIM_ERR_NO_DEVICE:
      return "no current device on this thread; call simpler.sim.set_device(i) first";
    case SIM_ERR_OUT_OF_MEMORY:
      return "device memory exhausted; free buffers or raise SIMPLER_SIM_DEVICE_MEMORY "
             "(or configure(device_memory_bytes=...) before first use)";
    case SIM_ERR_INVALID_POINTER:
      return "not inside a live device allocation (foreign, interior or already freed pointer)";
    case SIM_ERR_OUT_OF_RANGE:
      return "the range runs past the end of its device allocation";
    case SIM_ERR_INVALID_HANDLE:
      return "unknown or destroyed stream/event handle";
    case SIM_ERR_WRONG_DEVICE:
      return "the event belongs to another device than the stream";
    case SIM_ERR_INJECTED_FAULT:
      return "failure injected by simpler.sim.inject_fault()";
    case SIM_ERR_ALREADY_INITIALIZED:
      return "configure() only works before any device is used in this process";
    case SIM_ERR_UNKNOWN_OPERATION:
      return "unknown operation name; see simpler.sim.OPERATIONS";
    case SIM_ERR_BUSY:
      return "the call would wait for itself (made from the stream's own host function)";
    default:
      return "status reported by the stream or device job";
  }
}

[[noreturn]] void raise_sim_error(const std::string& call, int status) {
  const std::string message = call + " failed: " + simpler_status_name(status) + " (" +
                              std::to_string(status) + "): " + hint_for(status);
  py::object error_type;
  try {
    error_type = py::module_::import("simpler.errors").attr("SimError");
  } catch (py::error_already_set&) {
    throw std::runtime_error(message);  // simpler.errors unavailable: plain RuntimeError
  }
  py::object error = error_type(message, status);
  PyErr_SetObject(error_type.ptr(), error.ptr());
  throw py::error_already_set();
}

void check(int status, const std::string& call) {
  if (status != SIMPLER_OK) raise_sim_error(call, status);
}

// Runs a driver call that may block (copies, synchronizes, resets) without the GIL, so
// other Python threads keep running; the status comes back once the GIL is held again.
template <class Call>
int without_gil(Call&& call) {
  py::gil_scoped_release release;
  return call();
}

// A C-contiguous view of a host buffer, released on scope exit.
class HostView {
 public:
  HostView(const py::handle& object, bool writable, const char* role) {
    const int flags = PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) {
      PyErr_Clear();
      const std::string type = py::str(py::type::handle_of(object).attr("__name__"));
      if (writable && PyObject_CheckBuffer(object.ptr()))
        throw py::value_error(std::string(role) + " must be a writable buffer (got a read-only " +
                              type + ")");
      throw py::type_error(std::string(role) +
                           " must be a numpy array or a buffer-protocol object, got " + type);
    }
    if (!PyBuffer_IsContiguous(&view_, 'C')) {
      PyBuffer_Release(&view_);
      throw py::value_error(std::string(role) +
                            " must be C-contiguous; pass numpy.ascontiguousarray(x) instead");
    }
  }
  ~HostView() { PyBuffer_Release(&view_); }
  HostView(const HostView&) = delete;
  HostView& operator=(const HostView&) = delete;

  void* data() const { return view_.buf; }
  // nbytes, or the whole buffer when not given; never more than the buffer holds.
  size_t span(std::optional<int64_t> nbytes, const char* role) const {
    const auto available = static_cast<int64_t>(view_.len);
    if (!nbytes) return static_cast<size_t>(available);
    if (*nbytes < 0) throw py::value_error("nbytes must be >= 0, got " + std::to_string(*nbytes));
    if (*nbytes > available)
      throw py::value_error("nbytes=" + std::to_string(*nbytes) + " exceeds the " +
                            support::counted(static_cast<uint64_t>(available), "byte") +
                            " of the " + role);
    return static_cast<size_t>(*nbytes);
  }

 private:
  Py_buffer view_{};
};

void* as_ptr(uintptr_t address) { return reinterpret_cast<void*>(address); }
sim_stream_t as_stream(uintptr_t handle) { return reinterpret_cast<sim_stream_t>(handle); }
sim_event_t as_event(uintptr_t handle) { return reinterpret_cast<sim_event_t>(handle); }
uintptr_t as_int(const void* p) { return reinterpret_cast<uintptr_t>(p); }

size_t checked_size(int64_t nbytes) {
  if (nbytes < 0) throw py::value_error("nbytes must be >= 0, got " + std::to_string(nbytes));
  return static_cast<size_t>(nbytes);
}

// Runs a Python callable on a stream's executor thread.
void call_python_host_function(void* callable) {
  py::gil_scoped_acquire gil;
  try {
    py::handle(static_cast<PyObject*>(callable))();
  } catch (py::error_already_set& error) {
    error.discard_as_unraisable("simpler.sim host function");
  }
}

py::dict config_dict(const SimConfig& c) {
  py::dict d;
  d["device_count"] = c.device_count;
  d["clusters_per_device"] = c.clusters_per_device;
  d["aicpu_threads"] = c.aicpu_threads;
  d["device_memory_bytes"] = c.device_memory_bytes;
  return d;
}

void bind_config_and_devices(py::module_& s) {
  s.def("api_version", [] {
    uint32_t version = 0;
    check(sim_driver_api_version(&version), "sim_driver_api_version");
    return version;
  });
  s.def("get_config", [] {
    SimConfig config{};
    check(sim_get_config(&config), "sim_get_config");
    return config_dict(config);
  });
  s.def(
      "configure",
      [](int32_t device_count, int32_t clusters_per_device, int32_t aicpu_threads,
         uint64_t device_memory_bytes) {
        SimConfig config{};
        config.device_count = device_count;
        config.clusters_per_device = clusters_per_device;
        config.aicpu_threads = aicpu_threads;
        config.device_memory_bytes = device_memory_bytes;
        check(sim_configure(&config), "sim_configure");
      },
      py::arg("device_count"), py::arg("clusters_per_device"), py::arg("aicpu_threads"),
      py::arg("device_memory_bytes"));
  s.def("device_count", [] {
    int32_t count = 0;
    check(sim_get_device_count(&count), "sim_get_device_count");
    return count;
  });
  s.def(
      "set_device",
      [](int32_t device) {
        check(sim_set_device(device), "sim_set_device(" + std::to_string(device) + ")");
      },
      py::arg("device"));
  s.def("get_device", []() -> std::optional<int32_t> {
    int32_t device = -1;
    const int status = sim_get_device(&device);
    if (status == SIM_ERR_NO_DEVICE) return std::nullopt;
    check(status, "sim_get_device");
    return device;
  });
  s.def(
      "device_topology",
      [](int32_t device) {
        SimTopology t{};
        check(sim_device_topology(device, &t),
              "sim_device_topology(" + std::to_string(device) + ")");
        py::dict d;
        d["clusters"] = t.clusters;
        d["aic_cores"] = t.aic_cores;
        d["aiv_cores"] = t.aiv_cores;
        d["aicpu_threads"] = t.aicpu_threads;
        return d;
      },
      py::arg("device"));
  s.def(
      "device_reset",
      [](int32_t device) {
        const int status = without_gil([&] { return sim_device_reset(device); });
        check(status, "sim_device_reset(" + std::to_string(device) + ")");
      },
      py::arg("device"));
}

void bind_memory(py::module_& s) {
  s.def(
      "malloc",
      [](int64_t nbytes) {
        void* ptr = nullptr;
        check(sim_malloc(&ptr, checked_size(nbytes)), "sim_malloc(" + std::to_string(nbytes) + ")");
        return as_int(ptr);
      },
      py::arg("nbytes"));
  s.def(
      "free", [](uintptr_t ptr) { check(sim_free(as_ptr(ptr)), "sim_free"); }, py::arg("ptr"));
  s.def("mem_get_info", [] {
    size_t free_bytes = 0, total = 0;
    check(sim_mem_get_info(&free_bytes, &total), "sim_mem_get_info");
    return std::make_pair(free_bytes, total);
  });
  s.def(
      "pointer_device",
      [](uintptr_t ptr, int64_t nbytes) {
        int32_t device = -1;
        check(sim_pointer_device(as_ptr(ptr), checked_size(nbytes), &device), "sim_pointer_device");
        return device;
      },
      py::arg("ptr"), py::arg("nbytes"));
  s.def(
      "memset",
      [](uintptr_t ptr, int value, int64_t nbytes) {
        const size_t size = checked_size(nbytes);
        const int status = without_gil([&] { return sim_memset(as_ptr(ptr), value, size); });
        check(status, "sim_memset");
      },
      py::arg("ptr"), py::arg("value"), py::arg("nbytes"));
  s.def(
      "memcpy_htod",
      [](uintptr_t dst, const py::handle& src, std::optional<int64_t> nbytes) {
        HostView view(src, false, "source");
        const size_t size = view.span(nbytes, "source");
        const int status = without_gil(
            [&] { return sim_memcpy(as_ptr(dst), view.data(), size, SIM_MEMCPY_HOST_TO_DEVICE); });
        check(status, "sim_memcpy(host to device)");
      },
      py::arg("dst_ptr"), py::arg("src"), py::arg("nbytes") = py::none());
  s.def(
      "memcpy_dtoh",
      [](const py::handle& dst, uintptr_t src, std::optional<int64_t> nbytes) {
        HostView view(dst, true, "destination");
        const size_t size = view.span(nbytes, "destination");
        const int status = without_gil(
            [&] { return sim_memcpy(view.data(), as_ptr(src), size, SIM_MEMCPY_DEVICE_TO_HOST); });
        check(status, "sim_memcpy(device to host)");
      },
      py::arg("dst"), py::arg("src_ptr"), py::arg("nbytes") = py::none());
  s.def(
      "memcpy_dtod",
      [](uintptr_t dst, uintptr_t src, int64_t nbytes) {
        const size_t size = checked_size(nbytes);
        const int status = without_gil([&] {
          return sim_memcpy(as_ptr(dst), as_ptr(src), size, SIM_MEMCPY_DEVICE_TO_DEVICE);
        });
        check(status, "sim_memcpy(device to device)");
      },
      py::arg("dst_ptr"), py::arg("src_ptr"), py::arg("nbytes"));
}

// The int/bool result of a query: True = done, False = pending, else raise.
bool done_or_raise(int status, const char* call) {
  if (status == SIMPLER_NOT_READY) return false;
  check(status, call);
  return true;
}

void bind_streams(py::module_& s) {
  s.def("stream_create", [] {
    sim_stream_t stream = nullptr;
    check(sim_stream_create(&stream), "sim_stream_create");
    return as_int(stream);
  });
  s.def(
      "stream_destroy",
      [](uintptr_t stream) {
        const int status = without_gil([&] { return sim_stream_destroy(as_stream(stream)); });
        check(status, "sim_stream_destroy");
      },
      py::arg("stream"));
  s.def(
      "stream_synchronize",
      [](uintptr_t stream) {
        // In slices, so Ctrl-C interrupts the wait (the stream's work keeps running);
        // then one counted synchronize reports the sticky status.
        sim_stream_t s = as_stream(stream);
        int waited = SIMPLER_OK;
        wait_interruptibly([&](std::chrono::microseconds slice) {
          waited = sim_stream_wait(s, slice.count());
          return waited != SIMPLER_NOT_READY;
        });
        const int status = without_gil([&] { return sim_stream_synchronize(s); });
        check(status, "sim_stream_synchronize");
      },
      py::arg("stream"));
  s.def(
      "stream_wait",
      [](uintptr_t stream, int64_t timeout_us) {
        const int status =
            without_gil([&] { return sim_stream_wait(as_stream(stream), timeout_us); });
        if (status == SIMPLER_NOT_READY) return false;
        check(status, "sim_stream_wait");
        return true;
      },
      py::arg("stream"), py::arg("timeout_us"));
  s.def(
      "stream_query",
      [](uintptr_t stream) {
        return done_or_raise(sim_stream_query(as_stream(stream)), "sim_stream_query");
      },
      py::arg("stream"));
  s.def(
      "stream_device",
      [](uintptr_t stream) {
        int32_t device = -1;
        check(sim_stream_device(as_stream(stream), &device), "sim_stream_device");
        return device;
      },
      py::arg("stream"));
  s.def(
      "memcpy_htod_async",
      [](uintptr_t dst, const py::handle& src, std::optional<int64_t> nbytes, uintptr_t stream) {
        HostView view(src, false, "source");
        check(sim_memcpy_async(as_ptr(dst), view.data(), view.span(nbytes, "source"),
                               SIM_MEMCPY_HOST_TO_DEVICE, as_stream(stream)),
              "sim_memcpy_async(host to device)");
      },
      py::arg("dst_ptr"), py::arg("src"), py::arg("nbytes"), py::arg("stream"));
  s.def(
      "memcpy_dtoh_async",
      [](const py::handle& dst, uintptr_t src, std::optional<int64_t> nbytes, uintptr_t stream) {
        HostView view(dst, true, "destination");
        check(sim_memcpy_async(view.data(), as_ptr(src), view.span(nbytes, "destination"),
                               SIM_MEMCPY_DEVICE_TO_HOST, as_stream(stream)),
              "sim_memcpy_async(device to host)");
      },
      py::arg("dst"), py::arg("src_ptr"), py::arg("nbytes"), py::arg("stream"));
  s.def(
      "memcpy_dtod_async",
      [](uintptr_t dst, uintptr_t src, int64_t nbytes, uintptr_t stream) {
        check(sim_memcpy_async(as_ptr(dst), as_ptr(src), checked_size(nbytes),
                               SIM_MEMCPY_DEVICE_TO_DEVICE, as_stream(stream)),
              "sim_memcpy_async(device to device)");
      },
      py::arg("dst_ptr"), py::arg("src_ptr"), py::arg("nbytes"), py::arg("stream"));
  s.def(
      "memset_async",
      [](uintptr_t ptr, int value, int64_t nbytes, uintptr_t stream) {
        check(sim_memset_async(as_ptr(ptr), value, checked_size(nbytes), as_stream(stream)),
              "sim_memset_async");
      },
      py::arg("ptr"), py::arg("value"), py::arg("nbytes"), py::arg("stream"));
  s.def(
      "launch_host_func",
      [](uintptr_t stream, const py::function& fn) {
        // Borrowed: the caller (simpler.sim.Stream) keeps fn alive until the stream ran it.
        check(sim_launch_host_func(as_stream(stream), call_python_host_function, fn.ptr()),
              "sim_launch_host_func");
      },
      py::arg("stream"), py::arg("fn"));
}

void bind_events(py::module_& s) {
  s.def("event_create", [] {
    sim_event_t event = nullptr;
    check(sim_event_create(&event), "sim_event_create");
    return as_int(event);
  });
  s.def(
      "event_record",
      [](uintptr_t event, uintptr_t stream) {
        check(sim_event_record(as_event(event), as_stream(stream)), "sim_event_record");
      },
      py::arg("event"), py::arg("stream"));
  s.def(
      "stream_wait_event",
      [](uintptr_t stream, uintptr_t event) {
        check(sim_stream_wait_event(as_stream(stream), as_event(event)), "sim_stream_wait_event");
      },
      py::arg("stream"), py::arg("event"));
  s.def(
      "event_synchronize",
      [](uintptr_t event) {
        const int status = without_gil([&] { return sim_event_synchronize(as_event(event)); });
        check(status, "sim_event_synchronize");
      },
      py::arg("event"));
  s.def(
      "event_query",
      [](uintptr_t event) {
        return done_or_raise(sim_event_query(as_event(event)), "sim_event_query");
      },
      py::arg("event"));
  s.def(
      "event_destroy",
      [](uintptr_t event) { check(sim_event_destroy(as_event(event)), "sim_event_destroy"); },
      py::arg("event"));
}

void bind_hooks(py::module_& s) {
  s.def(
      "inject_fault",
      [](const std::string& op, int32_t count, int32_t status) {
        check(sim_inject_fault(op.c_str(), count, status), "sim_inject_fault(\"" + op + "\")");
      },
      py::arg("op"), py::arg("count"), py::arg("status"));
  s.def("clear_faults", [] { check(sim_clear_faults(), "sim_clear_faults"); });
  s.def(
      "call_count",
      [](const std::string& op) {
        uint64_t count = 0;
        check(sim_call_count(op.c_str(), &count), "sim_call_count(\"" + op + "\")");
        return count;
      },
      py::arg("op"));
  s.def("reset_counters", [] { check(sim_reset_counters(), "sim_reset_counters"); });
}

}  // namespace

void bind_sim(py::module_& m) {
  py::module_ s =
      m.def_submodule("sim", "The simulated device driver (sim_driver.h); use simpler.sim");
  bind_config_and_devices(s);
  bind_memory(s);
  bind_streams(s);
  bind_events(s);
  bind_hooks(s);
  bind_device_array(s);
}

}  // namespace simpler::python
