#pragma once
// Reading a searcher snapshot back: typed accessors that throw SnapshotError
// naming the field when the JSON does not have the shape Snapshot() writes.
// Searcher::Restore catches it at its boundary and returns kInvalidArgument,
// so a damaged snapshot is an error value, never an abort.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace ring::search {

struct SnapshotError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The member `key` of object `j`; throws unless `j` is an object holding it.
const nlohmann::json& Field(const nlohmann::json& j, const char* key);
// `j` as an array / object; `what` names it in the error.
const nlohmann::json& ArrayOf(const nlohmann::json& j, const std::string& what);
const nlohmann::json& ObjectOf(const nlohmann::json& j, const std::string& what);
// An integer in [min, max].
int64_t IntOf(const nlohmann::json& j, const std::string& what, int64_t min = INT64_MIN,
              int64_t max = INT64_MAX);
bool BoolOf(const nlohmann::json& j, const std::string& what);
// A finite number.
double DoubleOf(const nlohmann::json& j, const std::string& what);
std::string StringOf(const nlohmann::json& j, const std::string& what);

// Shorthands for a member of an object.
inline int64_t IntField(const nlohmann::json& j, const char* key, int64_t min = INT64_MIN,
                        int64_t max = INT64_MAX) {
  return IntOf(Field(j, key), key, min, max);
}
inline bool BoolField(const nlohmann::json& j, const char* key) {
  return BoolOf(Field(j, key), key);
}

}  // namespace ring::search
