#pragma once
// Request bodies name only fields the endpoint knows: a misspelt or
// unsupported field is refused (400, naming it) instead of being ignored.
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace ring {

// `object` (a JSON object; anything else passes, the caller checks types)
// holds only `known` fields. `where` names it in the message, e.g.
// "the request body" or "reports[3]".
inline Status CheckKnownFields(const nlohmann::json& object, std::initializer_list<std::string_view> known,
                               const std::string& where) {
  if (!object.is_object()) return Status::Ok();
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return InvalidArgument("unknown field \"" + key.substr(0, 64) + "\" in " + where + " (known: " + list +
                           ")");
  }
  return Status::Ok();
}

}  // namespace ring
