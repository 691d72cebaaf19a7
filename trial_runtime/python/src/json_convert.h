#pragma once
// Conversions between nlohmann::json (hyperparameters, checkpoint metadata)
// and plain Python values: dict, list, str, int, float, bool and None.
// Call with the GIL held.
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace ring::trial::python {

pybind11::object ToPython(const nlohmann::json& value);

// Accepts dicts with str keys, lists, tuples, str, int, float, bool, None,
// and numbers that define __index__ or __float__ (numpy and 0-d torch
// scalars). Throws pybind11::type_error naming what it cannot convert.
nlohmann::json FromPython(pybind11::handle value);

}  // namespace ring::trial::python
