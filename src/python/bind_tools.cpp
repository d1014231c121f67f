// simpler._native tools: the runtime-build locator and KernelCompiler (thin bindings of
// include/simpler/worker/{runtime_build,kernel_compiler}.h).
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "call_mismatch.h"
#include "simpler/worker/kernel_compiler.h"
#include "simpler/worker/runtime_build.h"

namespace py = pybind11;

namespace simpler::python {
namespace {

// RuntimeBuildNotFound -> FileNotFoundError (what() names the path);
// KernelCompileError -> simpler.kernel_compiler.KernelCompileError with .stderr
// (KernelCacheError -> its subclass KernelCacheError).
// std::invalid_argument already becomes ValueError through pybind11's defaults.
// By value: pybind11 takes a translator as void(*)(std::exception_ptr).
void translate_tool_errors(
    std::exception_ptr error) {  // NOLINT(performance-unnecessary-value-param)
  try {
    if (error) std::rethrow_exception(error);
  } catch (const RuntimeBuildNotFound& e) {
    try {
      py::object type = py::module_::import("simpler.errors").attr("RuntimeBuildNotFoundError");
      PyErr_SetObject(type.ptr(), type(e.what()).ptr());
    } catch (py::error_already_set&) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    }
  } catch (const KernelCompileError& e) {
    try {
      const char* name = dynamic_cast<const KernelCacheError*>(&e) != nullptr
                             ? "KernelCacheError"
                             : "KernelCompileError";
      py::object type = py::module_::import("simpler.kernel_compiler").attr(name);
      py::object instance = type(e.what(), e.compiler_stderr());
      PyErr_SetObject(type.ptr(), instance.ptr());
    } catch (py::error_already_set&) {
      // The Python class could not be loaded: still raise, as a plain RuntimeError.
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  }
}

CoreType parse_core_type(const std::string& name) {
  if (auto core = core_type_from_name(name)) return *core;
  throw py::value_error(
      "core_type must be 'aic' (cube), 'aiv' (vector) or 'mix' (a cluster task "
      "kernel: cube and vector cores together), got '" +
      name + "'");
}

py::bytes to_bytes(const std::vector<uint8_t>& image) {
  return py::bytes(reinterpret_cast<const char*>(image.data()), image.size());
}

void bind_runtime_bins(py::module_& m) {
  py::class_<RuntimeBins>(m, "RuntimeBins",
                          "The files of one runtime build (platform, runtime). Optional "
                          "executor image paths are '' when the build has none.")
      .def(py::init([](std::string platform, std::string runtime, std::string host_lib_path,
                       std::string sim_context_path, std::string aicpu_image_path,
                       std::string aicore_image_path) {
             return RuntimeBins{std::move(platform),         std::move(runtime),
                                std::move(host_lib_path),    std::move(sim_context_path),
                                std::move(aicpu_image_path), std::move(aicore_image_path)};
           }),
           py::kw_only(), py::arg("platform"), py::arg("runtime"), py::arg("host_lib_path"),
           py::arg("sim_context_path"), py::arg("aicpu_image_path") = "",
           py::arg("aicore_image_path") = "")
      .def_readwrite("platform", &RuntimeBins::platform)
      .def_readwrite("runtime", &RuntimeBins::runtime)
      .def_readwrite("host_lib_path", &RuntimeBins::host_lib_path)
      .def_readwrite("sim_context_path", &RuntimeBins::sim_context_path)
      .def_readwrite("aicpu_image_path", &RuntimeBins::aicpu_image_path)
      .def_readwrite("aicore_image_path", &RuntimeBins::aicore_image_path)
      .def(
          "__eq__",
          [](const RuntimeBins& a, const RuntimeBins& b) {
            return a.platform == b.platform && a.runtime == b.runtime &&
                   a.host_lib_path == b.host_lib_path && a.sim_context_path == b.sim_context_path &&
                   a.aicpu_image_path == b.aicpu_image_path &&
                   a.aicore_image_path == b.aicore_image_path;
          },
          py::is_operator())  // anything else: NotImplemented, so == is False
      .def(py::pickle(        // paths: a value another process can use (copy.copy/deepcopy too)
          [](const RuntimeBins& b) {
            return py::make_tuple(b.platform, b.runtime, b.host_lib_path, b.sim_context_path,
                                  b.aicpu_image_path, b.aicore_image_path);
          },
          [](const py::tuple& state) {
            if (state.size() != 6) throw py::value_error("RuntimeBins: not a pickled RuntimeBins");
            const auto field = [&state](size_t i) { return state[i].cast<std::string>(); };
            return RuntimeBins{field(0), field(1), field(2), field(3), field(4), field(5)};
          }))
      .def("__repr__", [](const RuntimeBins& b) {
        return "RuntimeBins(platform=" + py::repr(py::str(b.platform)).cast<std::string>() +
               ", runtime=" + py::repr(py::str(b.runtime)).cast<std::string>() +
               ", host_lib_path=" + py::repr(py::str(b.host_lib_path)).cast<std::string>() +
               ", sim_context_path=" + py::repr(py::str(b.sim_context_path)).cast<std::string>() +
               ", aicpu_image_path=" + py::repr(py::str(b.aicpu_image_path)).cast<std::string>() +
               ", aicore_image_path=" + py::repr(py::str(b.aicore_image_path)).cast<std::string>() +
               ")";
      });
  detail::translate_call_mismatches(m.attr("RuntimeBins"));
  // Equality without hashing would make the objects unhashable silently; say so.
  m.attr("RuntimeBins").attr("__hash__") = py::none();

  m.def("known_platforms", &known_platforms);
  m.def("known_runtimes", &known_runtimes);
  m.def("default_lib_dir", &default_lib_dir,
        "$SIMPLER_LIB_DIR if set, else the lib/ directory of the build this module came from.");
  m.def(
      "find_runtime_build",
      [](const std::string& platform, const std::string& runtime,
         const std::optional<std::filesystem::path>& lib_dir) {
        return find_runtime_build(platform, runtime, lib_dir ? lib_dir->string() : std::string());
      },
      py::arg("platform"), py::arg("runtime"), py::arg("lib_dir") = py::none());
}

void bind_kernel_compiler(py::module_& m) {
  py::class_<KernelCompiler>(m, "KernelCompiler",
                             "Compiles kernel and orchestration sources into simulator images "
                             "(see docs/kernels.md); results are cached by content.")
      .def(py::init([](const std::optional<std::filesystem::path>& cache_dir,
                       const std::optional<std::filesystem::path>& compiler,
                       const std::vector<std::filesystem::path>& include_dirs,
                       const std::vector<std::string>& extra_flags, bool use_cache,
                       double timeout_seconds) {
             KernelCompilerOptions options;
             options.timeout_seconds = timeout_seconds;
             if (cache_dir) options.cache_dir = cache_dir->string();
             if (compiler) options.compiler = compiler->string();
             for (const auto& dir : include_dirs) options.include_dirs.push_back(dir.string());
             options.extra_flags = extra_flags;
             options.use_cache = use_cache;
             return std::make_unique<KernelCompiler>(std::move(options));
           }),
           py::arg("cache_dir") = py::none(), py::kw_only(), py::arg("compiler") = py::none(),
           py::arg("include_dirs") = std::vector<std::filesystem::path>{},
           py::arg("extra_flags") = std::vector<std::string>{}, py::arg("use_cache") = true,
           py::arg("timeout_seconds") = 0.0)
      .def(
          "compile_kernel",
          [](const KernelCompiler& self, const std::string& source, const std::string& core_type) {
            const CoreType core = parse_core_type(core_type);
            std::vector<uint8_t> image;
            {
              py::gil_scoped_release release;  // the compiler takes a while
              image = self.compile_kernel(source, core);
            }
            return to_bytes(image);
          },
          py::arg("source"), py::arg("core_type") = "aiv",
          "Kernel image bytes; the source must export extern \"C\" void kernel_entry(int64_t*).")
      .def(
          "compile_orchestration",
          [](const KernelCompiler& self, const std::string& source,
             const std::optional<std::string>& entry) {
            std::vector<uint8_t> image;
            {
              py::gil_scoped_release release;
              image = self.compile_orchestration(source, entry.value_or(std::string()));
            }
            return to_bytes(image);
          },
          py::arg("source"), py::arg("entry") = py::none(),
          "Orchestration image bytes; when `entry` is given the image must export it.")
      .def_property_readonly("compiler", &KernelCompiler::compiler)
      .def_property_readonly("cache_dir", &KernelCompiler::cache_dir)
      .def_property_readonly("use_cache", &KernelCompiler::use_cache)
      .def_property_readonly("timeout_seconds", &KernelCompiler::timeout_seconds)
      .def_property_readonly("stats", [](const KernelCompiler& self) {
        const KernelCompilerStats s = self.stats();
        py::dict d;
        d["compiler_runs"] = s.compiler_runs;
        d["cache_hits"] = s.cache_hits;
        d["cache_write_failures"] = s.cache_write_failures;
        return d;
      });
  m.def("kernel_include_dir", &kernel_include_dir,
        "simpler's include/ directory (kernel/kernel_abi.h, orch/orchestration_api.h).");
  m.def("default_kernel_compiler", &default_kernel_compiler);
  m.def("default_kernel_cache_dir", &default_kernel_cache_dir);
}

}  // namespace

void bind_tools(py::module_& m) {
  py::register_exception_translator(&translate_tool_errors);
  bind_runtime_bins(m);
  bind_kernel_compiler(m);
}

}  // namespace simpler::python
