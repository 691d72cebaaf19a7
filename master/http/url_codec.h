#pragma once
// Percent-decoding of request targets, and the small lexical helpers of
// header values.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ring {

// Decodes %XX escapes (and '+' as space when `plus_is_space`); nullopt on a bad escape.
std::optional<std::string> PercentDecode(std::string_view in, bool plus_is_space);

// Splits "a=1&b=x%20y" into decoded pairs; nullopt on a bad escape.
std::optional<std::map<std::string, std::string>> ParseQuery(std::string_view query);

// `s` without the optional whitespace (spaces and tabs) at either end.
std::string_view TrimOws(std::string_view s);

}  // namespace ring
