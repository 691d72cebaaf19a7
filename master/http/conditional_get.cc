#include "master/http/conditional_get.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "master/http/url_codec.h"

namespace ring {
namespace {

std::string_view Opaque(std::string_view tag) {
  tag = TrimOws(tag);
  if (tag.size() >= 2 && (tag[0] == 'W' || tag[0] == 'w') && tag[1] == '/') tag.remove_prefix(2);
  return tag;
}

bool HasHeader(const ApiResponse& res, std::string_view name) {
  for (const auto& [k, v] : res.headers)
    if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        }))
      return true;
  return false;
}

}  // namespace

std::string BodyEtag(std::string_view body) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "\"%016llx-%llx\"", static_cast<unsigned long long>(h),
                static_cast<unsigned long long>(body.size()));
  return buf;
}

bool EtagMatches(std::string_view if_none_match, std::string_view etag) {
  if (TrimOws(if_none_match) == "*") return true;
  const std::string_view want = Opaque(etag);
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    const std::string_view one = if_none_match.substr(0, comma);
    if (!TrimOws(one).empty() && Opaque(one) == want) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

void ApplyConditionalGet(const ApiRequest& req, ApiResponse& res) {
  if (req.method != "GET" && req.method != "HEAD") return;
  if (res.status != 200) return;
  if (res.content_type == "application/gzip" || res.content_type == "application/octet-stream") return;
  if (res.etag.empty() && res.body.size() > kMaxEtagBody) return;  // not worth hashing: not polled
  const std::string etag = res.etag.empty() ? BodyEtag(res.body) : res.etag;
  res.headers.emplace_back("ETag", etag);
  if (res.content_type.rfind("application/json", 0) == 0 && !HasHeader(res, "Cache-Control"))
    res.headers.emplace_back("Cache-Control", "no-cache");
  const std::string if_none_match = req.Header("if-none-match");
  if (!if_none_match.empty() && EtagMatches(if_none_match, etag)) {
    res.status = 304;
    res.body.clear();
  }
}

}  // namespace ring
