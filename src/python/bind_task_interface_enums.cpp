// DataType (with element sizes and numpy mapping), ArgDirection, AddressSpace.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "element_kind.h"
#include "task_interface_types.h"

namespace py = pybind11;

namespace simpler::python::detail {
namespace {

// numpy dtype name of each DataType ("bfloat16" needs a registered extension type).
const char* numpy_name(DataType dt) {
  switch (dt) {
    case DataType::FLOAT32:
      return "float32";
    case DataType::FLOAT16:
      return "float16";
    case DataType::BFLOAT16:
      return "bfloat16";
    case DataType::INT8:
      return "int8";
    case DataType::INT16:
      return "int16";
    case DataType::INT32:
      return "int32";
    case DataType::INT64:
      return "int64";
    case DataType::UINT8:
      return "uint8";
    case DataType::UINT16:
      return "uint16";
    case DataType::UINT32:
      return "uint32";
    case DataType::UINT64:
      return "uint64";
    case DataType::BOOL:
      return "bool";
    case DataType::FLOAT64:
      return "float64";
  }
  throw py::value_error("dtype: not a DataType");
}

DataType from_numpy(py::handle dtype_like) {
  py::object np = py::module_::import("numpy");
  py::object d;
  try {
    d = np.attr("dtype")(dtype_like);
  } catch (const py::error_already_set& e) {  // numpy's own TypeError: say it is ours
    throw py::type_error("dtype: " + py::repr(dtype_like).cast<std::string>() +
                         " is not a numpy dtype (" + e.what() + ")");
  }
  const auto name = d.attr("name").cast<std::string>();
  const auto kind = d.attr("kind").cast<std::string>();
  const auto size = d.attr("itemsize").cast<size_t>();
  if (d.attr("byteorder").cast<std::string>() == ">") {
    throw py::value_error("dtype: " + name + " is big-endian; the chip is little-endian");
  }
  if (name == "bfloat16") return DataType::BFLOAT16;
  std::optional<DataType> out;
  const size_t bytes = size;
  if (kind == "f") out = data_type_of_kind(ElementKind::kFloat, bytes);
  if (kind == "i") out = data_type_of_kind(ElementKind::kInt, bytes);
  if (kind == "u") out = data_type_of_kind(ElementKind::kUInt, bytes);
  if (kind == "b") out = data_type_of_kind(ElementKind::kBool, bytes);
  if (!out) throw py::type_error("dtype: numpy " + name + " has no DataType");
  return *out;
}

// pybind11's enum_ constructor takes any int (DataType(99) was an enum no name has): the
// value must be a member's. Called once every value is added.
template <typename E>
void check_constructor(const py::module_& m, const std::string& name) {
  auto cls = py::reinterpret_borrow<py::class_<E>>(m.attr(name.c_str()));
  std::vector<std::pair<int64_t, std::string>> members;
  std::string accepted;
  for (auto [key, member] : py::dict(cls.attr("__members__"))) {
    members.emplace_back(py::cast<int64_t>(member.attr("value")), py::str(key));
    accepted += (accepted.empty() ? "" : ", ") + members.back().second + "=" +
                std::to_string(members.back().first);
  }
  py::delattr(cls, "__init__");  // else the new one would be pybind11's second overload
  const std::string article = std::string("AEIOU").find(name[0]) == std::string::npos ? "a" : "an";
  cls.def(py::init([name, article, members, accepted](py::handle value) {
            if (py::isinstance<E>(value)) return value.cast<E>();  // DataType(DataType.INT32)
            if (PyUnicode_Check(value.ptr())) {
              throw py::type_error(name + "(): value must be an int (" + accepted + "), got str " +
                                   py::repr(value).cast<std::string>() + "; name a member as " +
                                   name + "." + members.front().second);
            }
            const py::object index = index_of(value, (name + "(): value").c_str());
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
            for (const auto& member : members) {
              if (overflow == 0 && member.first == v) return static_cast<E>(v);
            }
            throw py::value_error(name + "(): " + py::str(index).cast<std::string>() + " is not " +
                                  article + " " + name + " (values: " + accepted + ")");
          }),
          py::arg("value"));
}

}  // namespace

void bind_task_interface_enums(py::module_& m) {
  py::enum_<DataType>(m, "DataType",
                      "Element type of a tensor (values are the C ABI's ChipDataType).")
      .value("FLOAT32", DataType::FLOAT32)
      .value("FLOAT16", DataType::FLOAT16)
      .value("BFLOAT16", DataType::BFLOAT16)
      .value("INT8", DataType::INT8)
      .value("INT16", DataType::INT16)
      .value("INT32", DataType::INT32)
      .value("INT64", DataType::INT64)
      .value("UINT8", DataType::UINT8)
      .value("UINT16", DataType::UINT16)
      .value("UINT32", DataType::UINT32)
      .value("UINT64", DataType::UINT64)
      .value("BOOL", DataType::BOOL)
      .value("FLOAT64", DataType::FLOAT64)
      .def_property_readonly(
          "element_size", [](DataType d) { return element_size(d); }, "Bytes per element.")
      .def_static(
          "from_name",
          [](const std::string& name) {
            if (auto d = data_type_from_name(name)) return *d;
            throw py::value_error("dtype: '" + name + "' is not a DataType name (e.g. 'FLOAT32')");
          },
          py::arg("name"), "The DataType called `name` ('FLOAT32', ...); ValueError if none.")
      .def_static("from_numpy", &from_numpy, py::arg("dtype"),
                  "The DataType of a numpy dtype (or anything numpy.dtype() accepts).")
      .def(
          "to_numpy",
          [](DataType d) {
            py::object np = py::module_::import("numpy");
            try {
              return np.attr("dtype")(numpy_name(d));
            } catch (const py::error_already_set&) {
              throw py::type_error(std::string("dtype: numpy has no ") + numpy_name(d) +
                                   " dtype (register one, e.g. via ml_dtypes, or view the data "
                                   "as uint16)");
            }
          },
          "The numpy dtype of this DataType.");
  check_constructor<DataType>(m, "DataType");

  py::enum_<ArgDirection>(m, "ArgDirection", "Direction of one argument of a callable's signature.")
      .value("SCALAR", ArgDirection::SCALAR)
      .value("IN", ArgDirection::IN)
      .value("OUT", ArgDirection::OUT)
      .value("INOUT", ArgDirection::INOUT);
  check_constructor<ArgDirection>(m, "ArgDirection");

  py::enum_<AddressSpace>(m, "AddressSpace",
                          "Where a tensor's memory lives: HOST (staged by the runtime) or "
                          "DEVICE (caller-owned device memory).")
      .value("HOST", AddressSpace::HOST)
      .value("DEVICE", AddressSpace::DEVICE);
  check_constructor<AddressSpace>(m, "AddressSpace");
}

}  // namespace simpler::python::detail
