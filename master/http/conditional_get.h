#pragma once
// Conditional GET for every response the master sends: a strong ETag from a
// hash of the body, and 304 Not Modified with no body when the request's
// If-None-Match names it, so a UI that polls a list every few seconds moves
// a few hundred bytes while nothing changes. Transport-neutral (no Beast).
#include <cstddef>
#include <string>
#include <string_view>

#include "master/http/api_types.h"

namespace ring {

// "\"<16 hex digits of FNV-1a 64>-<body length in hex>\"", quotes included.
std::string BodyEtag(std::string_view body);

// Whether an If-None-Match header value ("*", or a comma-separated list of
// entity tags, weak ones compared weakly) names `etag`.
bool EtagMatches(std::string_view if_none_match, std::string_view etag);

// Answers larger than this get no ETag (hashing them costs more than it saves).
inline constexpr size_t kMaxEtagBody = 16u << 20;

// For a 200 answer to GET or HEAD that is not a download (tar.gz, raw
// bytes) nor over kMaxEtagBody: sets ETag (res.etag when the answer knows
// it, else a hash of the body), sets Cache-Control: no-cache on JSON that has none (the
// browser revalidates), and turns the answer into 304 with an empty body when
// If-None-Match matches.
void ApplyConditionalGet(const ApiRequest& req, ApiResponse& res);

}  // namespace ring
