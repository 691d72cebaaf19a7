#include "common/searcher/snapshot_json.h"

#include <cmath>

namespace ring::search {

const nlohmann::json& Field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) throw SnapshotError(std::string("expected an object holding \"") + key + "\"");
  auto it = j.find(key);
  if (it == j.end()) throw SnapshotError(std::string("\"") + key + "\" is missing");
  return *it;
}

const nlohmann::json& ArrayOf(const nlohmann::json& j, const std::string& what) {
  if (!j.is_array()) throw SnapshotError(what + " must be a list");
  return j;
}

const nlohmann::json& ObjectOf(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw SnapshotError(what + " must be an object");
  return j;
}

int64_t IntOf(const nlohmann::json& j, const std::string& what, int64_t min, int64_t max) {
  int64_t v = 0;
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw SnapshotError(what + " is out of range");
    v = j.get<int64_t>();
  } else {
    throw SnapshotError(what + " must be an integer");
  }
  if (v < min || v > max) throw SnapshotError(what + " is out of range: " + std::to_string(v));
  return v;
}

bool BoolOf(const nlohmann::json& j, const std::string& what) {
  if (!j.is_boolean()) throw SnapshotError(what + " must be true or false");
  return j.get<bool>();
}

double DoubleOf(const nlohmann::json& j, const std::string& what) {
  if (!j.is_number() || !std::isfinite(j.get<double>()))
    throw SnapshotError(what + " must be a finite number");
  return j.get<double>();
}

std::string StringOf(const nlohmann::json& j, const std::string& what) {
  if (!j.is_string()) throw SnapshotError(what + " must be a string");
  return j.get<std::string>();
}

}  // namespace ring::search
