// simpler._native.worker: ChipWorker, Worker, RunHandle, HostBuffer, CallableHandle.
//
// The Python classes in simpler/worker.py and simpler/chip_worker.py are thin layers over
// these; every rule lives in the C++ Worker/ChipWorker. Blocking native calls release the
// GIL (a host function on a caller stream may need it while simpler waits).
#include <pybind11/chrono.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "bindings.h"
#include "bound_instance.h"
#include "call_args.h"
#include "interruptible_wait.h"
#include "kernel_launch.h"
#include "process_local.h"
#include "simpler/worker/chip_worker.h"
#include "simpler/worker/worker.h"
#include "stream_arg.h"
#include "support/counted.h"
#include "task_interface_types.h"

namespace py = pybind11;

namespace simpler::python {
namespace {

// The largest close_grace (seconds, about 11 days): close() must end.
constexpr double kMaxCloseGraceSeconds = 1e6;

// C++ worker errors -> the classes of simpler.errors (imported lazily: errors.py imports
// this module).
// By value: pybind11 takes a translator as void(*)(std::exception_ptr).
void translate_worker_errors(std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
  try {
    if (p) std::rethrow_exception(p);
  } catch (const UnsupportedRuntimeOperation& e) {
    py::object cls = py::module_::import("simpler.errors").attr("UnsupportedRuntimeOperation");
    PyErr_SetObject(cls.ptr(), cls(e.what(), e.code()).ptr());
  } catch (const ChipWorkerError& e) {
    // KernelFaultError / KernelTimeoutError for those run statuses, else ChipWorkerError.
    py::object cls =
        py::module_::import("simpler.errors").attr("chip_worker_error_class")(e.code());
    PyErr_SetObject(cls.ptr(), cls(e.what(), e.code()).ptr());
  } catch (const SignatureMismatch& e) {
    py::object cls = py::module_::import("simpler.errors").attr("SignatureMismatchError");
    py::object index = py::none();
    if (e.arg_index() >= 0) index = py::int_(e.arg_index());
    PyErr_SetObject(cls.ptr(), cls(e.what(), index).ptr());
  } catch (const WorkerTimeoutError& e) {
    py::object cls = py::module_::import("simpler.errors").attr("WorkerTimeoutError");
    PyErr_SetObject(cls.ptr(), cls(e.what()).ptr());
  } catch (const NotImplementedYet& e) {
    py::object cls = py::module_::import("simpler.errors").attr("NotImplementedYetError");
    PyErr_SetObject(cls.ptr(), cls(e.what()).ptr());
  }
}

// An int id (numpy integers too, converted off the fast path); bool and numpy.bool_ are not.
int64_t strict_int(py::handle v, const char* field) {
  py::object index;
  PyObject* p = v.ptr();
  if (!PyLong_Check(p) || PyBool_Check(p)) {
    index = detail::index_of(v, field);
    p = index.ptr();
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(p, &overflow);
  if (overflow != 0) throw py::value_error(std::string(field) + ": out of range");
  return value;
}

const PyChipStorageTaskArgs& task_args(py::handle args, const char* api) {
  if (!py::isinstance<PyChipStorageTaskArgs>(args)) {
    throw py::type_error(std::string(api) + ": args must be a ChipStorageTaskArgs, got " +
                         Py_TYPE(args.ptr())->tp_name);
  }
  return args.cast<const PyChipStorageTaskArgs&>();
}

CallableHandle callable_handle(py::handle h, const char* api) {
  if (!py::isinstance<CallableHandle>(h)) {
    throw py::type_error(std::string(api) + ": handle must be a handle from register(), got " +
                         Py_TYPE(h.ptr())->tp_name);
  }
  return h.cast<CallableHandle>();
}

const ChipCallable& chip_callable(py::handle callable, const char* api) {
  if (!py::isinstance<ChipCallable>(callable)) {
    throw py::type_error(std::string(api) + ": chip_callable must be a ChipCallable, got " +
                         Py_TYPE(callable.ptr())->tp_name);
  }
  return callable.cast<const ChipCallable&>();
}

// A read-only host buffer (a view of bytes, a read-only mmap or numpy array) passed
// where the signature writes (OUT/INOUT) would be written by the run: refused first.
void refuse_read_only_outputs(const std::vector<ArgDirection>& signature,
                              const PyChipStorageTaskArgs& args, const char* api) {
  for (uint32_t i = 0; i < args.args.tensor_count && i < signature.size(); ++i) {
    const bool writes = signature[i] == ArgDirection::OUT || signature[i] == ArgDirection::INOUT;
    if (writes && i < args.host.size() && args.host[i] && args.host[i]->readonly()) {
      throw py::value_error(std::string(api) + ": args tensor " + std::to_string(i) + " (" +
                            arg_direction_name(signature[i]) +
                            ") is a read-only host buffer; the run would write into it. Pass a "
                            "writable array (e.g. numpy.array(x) or bytearray(x)).");
    }
  }
}

// A C-contiguous export of a host buffer-protocol object.
struct HostBytes {
  explicit HostBytes(py::handle obj, bool writable, const char* api) {
    const int flags = writable ? (PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) : PyBUF_C_CONTIGUOUS;
    if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) {
      PyErr_Clear();
      throw py::type_error(
          std::string(api) + ": expected a C-contiguous" + (writable ? " writable" : "") +
          " buffer (numpy array, bytearray, ...), got " + Py_TYPE(obj.ptr())->tp_name);
    }
  }
  ~HostBytes() { PyBuffer_Release(&view); }
  HostBytes(const HostBytes&) = delete;
  HostBytes& operator=(const HostBytes&) = delete;
  size_t size(std::optional<size_t> nbytes, const char* api) const {
    const size_t have = static_cast<size_t>(view.len);
    if (!nbytes) return have;
    if (*nbytes > have) {
      throw py::value_error(std::string(api) + ": nbytes " + std::to_string(*nbytes) +
                            " exceeds the host buffer's " + support::counted(have, "byte"));
    }
    return *nbytes;
  }
  Py_buffer view{};
};

std::optional<std::chrono::microseconds> timeout_us(std::optional<double> seconds) {
  // Past ~31 years a deadline means nothing: forever (inf converted to microseconds, or a
  // deadline past the clock's range, was a timeout in the past: wait(inf) returned at once).
  constexpr double kForeverSeconds = 1e9;
  if (!seconds || *seconds >= kForeverSeconds) return std::nullopt;
  if (!(*seconds >= 0)) {  // NaN too
    throw py::value_error("timeout must be >= 0 seconds (or None to wait forever)");
  }
  return std::chrono::microseconds(static_cast<int64_t>(*seconds * 1e6));
}

void bind_chip_worker(py::module_& m) {
  py::enum_<ChipWorkerState>(m, "ChipWorkerState")
      .value("NEW", ChipWorkerState::NEW)
      .value("INITIALIZED", ChipWorkerState::INITIALIZED)
      .value("CLOSED", ChipWorkerState::CLOSED)
      .value("FAILED", ChipWorkerState::FAILED);

  py::class_<CallableHandle> handle_class(m, "CallableHandle",
                                          "Opaque handle of a registered callable.");
  refuse_pickling(handle_class,
                  "CallableHandle cannot be pickled or copied: it names a callable registered "
                  "with a Worker of this process; register the ChipCallable where you need it");
  handle_class
      .def("__eq__",
           [](const CallableHandle& a, const py::object& b) {
             return py::isinstance<CallableHandle>(b) && a == b.cast<CallableHandle>();
           })
      .def("__hash__", [](CallableHandle h) { return std::hash<uint64_t>()(h.token); })
      .def("__repr__",
           [](CallableHandle h) { return "<CallableHandle #" + std::to_string(h.token) + ">"; });

  py::class_<ChipWorker>(m, "ChipWorker")
      .def(py::init<>())
      .def_property_readonly("state", &ChipWorker::state)
      .def_property_readonly("mode",
                             [](const ChipWorker& w) { return chip_worker_mode_name(w.mode()); })
      .def_property_readonly("device_id", &ChipWorker::device_id)
      .def_property_readonly("teardown_owed", &ChipWorker::teardown_owed)
      .def_property_readonly("generation", &ChipWorker::generation)
      .def_property_readonly("kernel_mode_supported", &ChipWorker::kernel_mode_supported)
      .def("init", &ChipWorker::init, py::arg("device_id"), py::arg("bins"),
           py::arg("prewarm_config") = std::nullopt, py::call_guard<py::gil_scoped_release>())
      .def("register",
           [](ChipWorker& w, py::handle c) {
             return w.register_callable(chip_callable(c, "ChipWorker.register"));
           })
      .def(
          "unregister",
          [](ChipWorker& w, py::handle h) {
            w.unregister_callable(callable_handle(h, "ChipWorker.unregister"));
          },
          py::arg("handle"))
      .def(
          "run",
          [](ChipWorker& w, py::handle handle, py::handle args,
             const std::optional<CallConfig>& config) {
            const CallableHandle h = callable_handle(handle, "ChipWorker.run");
            const auto& a = task_args(args, "ChipWorker.run");
            refuse_read_only_outputs(w.callable_signature(h), a, "ChipWorker.run");
            py::gil_scoped_release nogil;
            w.run(h, a.args, config);
          },
          py::arg("handle"), py::arg("args"), py::arg("config") = std::nullopt)
      .def(
          "malloc", [](ChipWorker& w, size_t size) { return w.malloc(size); }, py::arg("size"))
      .def(
          "free", [](ChipWorker& w, uint64_t device_ptr) { w.free(device_ptr); },
          py::arg("device_ptr"))
      .def(
          "copy_to",
          [](ChipWorker& w, uint64_t dst, py::handle src, std::optional<size_t> nbytes) {
            HostBytes b(src, false, "ChipWorker.copy_to");
            w.copy_to(dst, b.view.buf, b.size(nbytes, "ChipWorker.copy_to"));
          },
          py::arg("dst"), py::arg("src"), py::arg("nbytes") = std::nullopt)
      .def(
          "copy_from",
          [](ChipWorker& w, py::handle dst, uint64_t src, std::optional<size_t> nbytes) {
            HostBytes b(dst, true, "ChipWorker.copy_from");
            w.copy_from(b.view.buf, src, b.size(nbytes, "ChipWorker.copy_from"));
          },
          py::arg("dst"), py::arg("src"), py::arg("nbytes") = std::nullopt)
      .def("device_memory_info",
           [](ChipWorker& w) {
             const auto info = w.device_memory_info();
             return py::make_tuple(info.free_bytes, info.total_bytes);
           })
      .def("committed_device_memory", &ChipWorker::committed_device_memory)
      .def("kernel_init", &ChipWorker::kernel_init, py::arg("device_id"), py::arg("bins"),
           py::arg("config"), py::call_guard<py::gil_scoped_release>())
      .def(
          "kernel_prepare_callable",
          [](ChipWorker& w, py::handle c) {
            const ChipCallable& callable = chip_callable(c, "ChipWorker.kernel_prepare_callable");
            py::gil_scoped_release nogil;
            return w.kernel_prepare_callable(callable);
          },
          py::arg("chip_callable"))
      .def(
          "kernel_launch",
          [](ChipWorker& w, py::handle id, py::handle args, py::handle stream) {
            const int64_t callable_id = strict_int(id, "callable_id");
            const auto& a = task_args(args, "ChipWorker.kernel_launch");
            void* s = stream_pointer(stream, "ChipWorker.kernel_launch", /*zero_allowed=*/true);
            py::gil_scoped_release nogil;
            w.kernel_launch(callable_id, a.args, s);
          },
          py::arg("callable_id"), py::arg("args"), py::arg("caller_stream"))
      .def_property_readonly("prepared_image_count", &ChipWorker::prepared_image_count)
      .def("finalize", &ChipWorker::finalize, py::call_guard<py::gil_scoped_release>())
      .def_static("probe_kernel_mode_supported", &ChipWorker::probe_kernel_mode_supported,
                  py::arg("bins"), py::call_guard<py::gil_scoped_release>())
      .def_static("last_generation", &ChipWorker::last_generation);
}

void bind_worker_classes(py::module_& m) {
  py::class_<HostBuffer, std::shared_ptr<HostBuffer>>(
      m, "HostBuffer", py::buffer_protocol(), "Host memory from Worker.create_buffer (bytes).")
      .def_property_readonly("nbytes", &HostBuffer::nbytes)
      .def_property_readonly("address", &HostBuffer::address)
      .def_buffer([](HostBuffer& b) {
        return py::buffer_info(b.data(), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(b.nbytes())}, {1});
      });

  py::class_<RunHandle>(m, "RunHandle")
      .def("done", &RunHandle::done, py::call_guard<py::gil_scoped_release>())
      .def(
          "wait",
          [](const RunHandle& h, std::optional<double> timeout) {
            // In slices, so Ctrl-C raises KeyboardInterrupt promptly (the run keeps going).
            using Clock = std::chrono::steady_clock;
            const auto t = timeout_us(timeout);
            const auto deadline = t ? Clock::now() + *t : Clock::time_point::max();
            wait_interruptibly([&](std::chrono::microseconds slice) {
              if (t) {
                const auto left =
                    std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
                if (left <= slice) {
                  h.wait(std::max(left, std::chrono::microseconds(0)));  // the caller's timeout
                  return true;
                }
              }
              try {
                h.wait(slice);
                return true;
              } catch (const WorkerTimeoutError&) {
                return false;  // one slice expired, not the caller's timeout
              }
            });
          },
          py::arg("timeout") = std::nullopt);

  py::class_<Worker>(m, "Worker")
      .def(py::init([](int level, int32_t device_id, std::string platform, std::string runtime,
                       std::string execution_mode, bool enable_sdma, std::string lib_dir) {
             WorkerOptions o;
             o.level = level;
             o.device_id = device_id;
             o.platform = std::move(platform);
             o.runtime = std::move(runtime);
             o.execution_mode = std::move(execution_mode);
             o.enable_sdma = enable_sdma;
             o.lib_dir = std::move(lib_dir);
             return std::make_unique<Worker>(std::move(o));
           }),
           py::arg("level"), py::arg("device_id"), py::arg("platform"), py::arg("runtime"),
           py::arg("execution_mode"), py::arg("enable_sdma"), py::arg("lib_dir"))
      .def_property_readonly("state", [](const Worker& w) { return worker_state_name(w.state()); })
      .def_property_readonly(
          "execution_mode", [](const Worker& w) { return execution_mode_name(w.execution_mode()); })
      .def_property_readonly("level", [](const Worker& w) { return w.options().level; })
      .def_property_readonly("device_id", [](const Worker& w) { return w.options().device_id; })
      .def_property_readonly("holds_native_context", &Worker::holds_native_context)
      .def("kernel_mode_supported", &Worker::kernel_mode_supported,
           py::call_guard<py::gil_scoped_release>())
      .def("init", &Worker::init, py::arg("prewarm_config"), py::arg("config"),
           py::call_guard<py::gil_scoped_release>())
      .def("close", &Worker::close, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("abandoned_report", &Worker::abandoned_report)
      .def_property(
          "close_grace", [](const Worker& w) { return w.close_grace().count() / 1000.0; },
          [](Worker& w, double seconds) {
            // Bounded (close() must end) and finite: inf/nan would overflow the conversion.
            if (!(seconds >= 0 && seconds <= kMaxCloseGraceSeconds)) {
              throw py::value_error("Worker.close_grace: must be a number of seconds in 0.." +
                                    std::to_string(static_cast<int64_t>(kMaxCloseGraceSeconds)) +
                                    ", got " + py::repr(py::float_(seconds)).cast<std::string>());
            }
            w.set_close_grace(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
          })
      .def("committed_device_memory", &Worker::committed_device_memory,
           py::call_guard<py::gil_scoped_release>())
      // ---- program mode ----
      .def("register",
           [](Worker& w, py::handle c) {
             w.require_program_api("register");
             return w.register_callable(chip_callable(c, "Worker.register"));
           })
      .def("unregister",
           [](Worker& w, py::handle h) {
             w.require_program_api("unregister");
             w.unregister_callable(callable_handle(h, "Worker.unregister"));
           })
      .def("run",
           [](Worker& w, py::handle h, py::handle args, const std::optional<CallConfig>& config) {
             w.require_program_api("run");
             const CallableHandle handle = callable_handle(h, "Worker.run");
             const auto& a = task_args(args, "Worker.run");
             refuse_read_only_outputs(w.callable_signature(handle), a, "Worker.run");
             py::gil_scoped_release nogil;
             w.run(handle, a.args, config);
           })
      .def(
          "submit",
          [](Worker& w, py::handle h, py::handle args, const std::optional<CallConfig>& config,
             const std::string& api) {
            // `api`: "run" when the Python run() submits and waits, so messages name it.
            const std::string where = "Worker." + api;
            w.require_program_api(api.c_str());
            const CallableHandle handle = callable_handle(h, where.c_str());
            const auto& a = task_args(args, where.c_str());
            refuse_read_only_outputs(w.callable_signature(handle, api.c_str()), a, where.c_str());
            // Waits (Ctrl-C honoured) for earlier runs writing host memory this one uses.
            std::optional<RunHandle> run;
            wait_interruptibly([&](std::chrono::microseconds slice) {
              run = w.submit_within(handle, a.args, config, slice, api.c_str());
              return run.has_value();
            });
            return std::move(*run);
          },
          py::arg("handle"), py::arg("args"), py::arg("config"), py::arg("api") = "submit")
      .def("malloc", &Worker::malloc, py::call_guard<py::gil_scoped_release>())
      .def("free", &Worker::free, py::call_guard<py::gil_scoped_release>())
      .def("copy_to",
           [](Worker& w, uint64_t dst, py::handle src, std::optional<size_t> nbytes) {
             w.require_program_api("copy_to");
             HostBytes b(src, false, "Worker.copy_to");
             const size_t n = b.size(nbytes, "Worker.copy_to");
             py::gil_scoped_release nogil;
             w.copy_to(dst, b.view.buf, n);
           })
      .def("copy_from",
           [](Worker& w, py::handle dst, uint64_t src, std::optional<size_t> nbytes) {
             w.require_program_api("copy_from");
             HostBytes b(dst, true, "Worker.copy_from");
             const size_t n = b.size(nbytes, "Worker.copy_from");
             py::gil_scoped_release nogil;
             w.copy_from(b.view.buf, src, n);
           })
      .def("create_buffer", &Worker::create_buffer)
      .def("make_tensor_arg",
           [](Worker& w, py::handle array, std::vector<int64_t> shape, DataType dtype) {
             w.require_program_api("make_tensor_arg");
             auto lease = std::make_shared<const HostBufferLease>(array);
             if (!PyBuffer_IsContiguous(&lease->view(), 'C')) {
               throw py::value_error("Worker.make_tensor_arg: the host array must be C-contiguous");
             }
             PyChipTensor t;
             t.tensor = w.make_tensor_arg(reinterpret_cast<uint64_t>(lease->view().buf),
                                          static_cast<size_t>(lease->view().len), shape, dtype);
             t.host = std::move(lease);
             return t;
           })
      .def("release_buffer",
           [](Worker& w, py::handle buffer) {
             w.require_program_api("release_buffer");
             if (!py::isinstance<HostBuffer>(buffer)) {
               throw py::type_error(std::string("Worker.release_buffer: expected a buffer from "
                                                "create_buffer(), got ") +
                                    Py_TYPE(buffer.ptr())->tp_name);
             }
             w.release_buffer(buffer.cast<const HostBuffer&>());
           })
      .def("device_memory_info",
           [](Worker& w) {
             const auto info = w.device_memory_info();
             return py::make_tuple(info.free_bytes, info.total_bytes);
           })
      // ---- kernel mode: arguments checked in the spec's order before the native call ----
      .def("kernel_prepare_callable",
           [](Worker& w, py::handle c) {
             w.require_kernel_ready("kernel_prepare_callable");
             const ChipCallable& callable = chip_callable(c, "Worker.kernel_prepare_callable");
             py::gil_scoped_release nogil;
             return w.kernel_prepare_callable(callable);
           })
      .def("kernel_launch",
           [](Worker& w, py::handle id, py::handle values, py::handle stream) {
             w.require_kernel_ready("kernel_launch");
             void* s = stream_pointer(stream, "Worker.kernel_launch");
             py::handle args = unwrap_arguments(values);
             const int64_t callable_id = strict_int(id, "Worker.kernel_launch: callable_id");
             const auto* exact = bound_instance<PyChipStorageTaskArgs>(args);
             if (exact != nullptr || py::isinstance<PyChipStorageTaskArgs>(args)) {
               const auto& a =
                   exact != nullptr ? *exact : args.cast<const PyChipStorageTaskArgs&>();
               py::gil_scoped_release nogil;
               w.kernel_launch(callable_id, a.args, s);
               return;
             }
             // The borrowed form: packed against the callable's signature, then launched.
             const auto signature = w.kernel_arg_specs(callable_id, "kernel_launch");
             // Packed into this thread's scratch (no 4 KiB zeroing and no allocation per
             // launch); a launch re-entered from a __dlpack__ call packs into its own.
             thread_local PyChipStorageTaskArgs scratch;
             thread_local bool scratch_busy = false;
             // Not std::optional: its empty state still zeroed the 4 KiB payload per launch.
             std::unique_ptr<PyChipStorageTaskArgs> own;
             if (scratch_busy) own = std::make_unique<PyChipStorageTaskArgs>();
             PyChipStorageTaskArgs& packed = own ? *own : scratch;
             const bool borrowed_scratch = &packed == &scratch;
             scratch_busy = scratch_busy || borrowed_scratch;
             struct Release {
               bool active;
               PyChipStorageTaskArgs& packed;
               ~Release() {
                 if (!active) return;
                 packed.host.clear();  // kernel mode packs no host lease; keep none anyway
                 scratch_busy = false;
               }
             } release{borrowed_scratch, packed};
             pack_call_args(args, *signature,
                            {CallMode::KERNEL, w.options().device_id, "Worker.kernel_launch"},
                            packed);
             py::gil_scoped_release nogil;
             w.kernel_launch(callable_id, packed.args, s);
           })
      .def("kernel_launch_error", &Worker::kernel_launch_error,
           "The runtime's message for this Worker's latest launch that failed on the chip "
           "('' if none).")
      .def("kernel_bind",
           [](const py::object& self, py::handle id, py::handle values) {
             Worker& w = self.cast<Worker&>();
             w.require_kernel_ready("kernel_bind");
             py::handle args = unwrap_arguments(values);
             const int64_t callable_id = strict_int(id, "Worker.kernel_bind: callable_id");
             std::vector<ArgSpec> signature = *w.kernel_arg_specs(callable_id, "kernel_bind");
             PyChipStorageTaskArgs packed;
             if (py::isinstance<PyChipStorageTaskArgs>(args)) {
               packed = args.cast<const PyChipStorageTaskArgs&>();
               if (packed.args.tensor_count + packed.args.scalar_count != signature.size()) {
                 throw CallArgError(
                     -1, true,
                     "Worker.kernel_bind: the ChipStorageTaskArgs hold " +
                         support::counted(packed.args.tensor_count + packed.args.scalar_count,
                                          "argument") +
                         ", the callable's signature takes " +
                         support::counted(signature.size(), "argument"));
               }
             } else {
               pack_call_args(args, signature,
                              {CallMode::KERNEL, w.options().device_id, "Worker.kernel_bind"},
                              packed);
             }
             return std::make_unique<KernelLaunch>(self, w, callable_id, std::move(signature),
                                                   std::move(packed));
           })
      .def("pack_args", [](Worker& w, py::handle h, py::handle values, const char* api) {
        // Program mode, the borrowed form: host arrays are leased for the run.
        w.require_program_api(api);
        if (!py::isinstance<CallableHandle>(h)) {
          throw py::type_error(std::string("Worker.") + api +
                               ": expected a handle from register(), got " +
                               Py_TYPE(h.ptr())->tp_name);
        }
        const auto signature = w.registered_arg_specs(h.cast<CallableHandle>(), api);
        const std::string where = std::string("Worker.") + api;
        PyChipStorageTaskArgs packed;
        pack_call_args(values, signature, {CallMode::PROGRAM, w.options().device_id, where.c_str()},
                       packed);
        return packed;
      });
}

}  // namespace

void bind_worker(py::module_& m) {
  py::register_exception_translator(&translate_worker_errors);
  register_call_arg_errors();
  py::module_ sub =
      m.def_submodule("worker", "ChipWorker and Worker (C++), wrapped by simpler.worker");
  bind_chip_worker(sub);
  bind_kernel_launch(sub);
  bind_worker_classes(sub);
  // One scalar by level 2's rules, for levels 3/4 (orch.submit): both levels then pass the
  // same bits and refuse the same values with the same errors.
  sub.def(
      "pack_scalar",
      [](const ArgSpec& spec, py::handle value, const std::string& api, uint32_t index) {
        return detail::pack_scalar({CallMode::PROGRAM, 0, api.c_str()}, index, spec, value);
      },
      py::arg("spec"), py::arg("value"), py::arg("api"), py::arg("index"));
}

}  // namespace simpler::python
