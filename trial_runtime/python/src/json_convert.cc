#include "json_convert.h"

#include <string>

namespace ring::trial::python {

namespace py = pybind11;

py::object ToPython(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(value.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::binary: {
      const auto& bytes = value.get_binary();
      return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : value) list.append(ToPython(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = ToPython(item);
      return dict;
    }
  }
  return py::none();
}

namespace {

nlohmann::json FromPythonInt(py::handle value) {
  // Python ints are unbounded; JSON numbers here are 64-bit.
  try {
    return value.cast<int64_t>();
  } catch (const py::cast_error&) {
  }
  try {
    return value.cast<uint64_t>();
  } catch (const py::cast_error&) {
  }
  throw py::type_error("the integer " + py::repr(value).cast<std::string>() + " does not fit in 64 bits");
}

}  // namespace

nlohmann::json FromPython(py::handle value) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) return FromPythonInt(value);
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw py::type_error("dictionary keys must be str, got " + py::repr(key).cast<std::string>());
      object[key.cast<std::string>()] = FromPython(item);
    }
    return object;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : value) array.push_back(FromPython(item));
    return array;
  }
  // numpy and torch scalars are not int or float, but say how to become one.
  // A float tensor has __index__ too, but it raises: then try __float__.
  if (py::hasattr(value, "__index__")) {
    if (PyObject* index = PyNumber_Index(value.ptr()))
      return FromPythonInt(py::reinterpret_steal<py::object>(index));
    PyErr_Clear();
  }
  if (py::hasattr(value, "__float__")) {
    const double number = PyFloat_AsDouble(value.ptr());
    if (!(number == -1.0 && PyErr_Occurred())) return number;
    PyErr_Clear();
  }
  throw py::type_error("cannot convert " + py::repr(value).cast<std::string>() + " (of type " +
                       py::str(value.get_type().attr("__name__")).cast<std::string>() +
                       ") to JSON: use dict, list, str, int, float, bool or None");
}

}  // namespace ring::trial::python
