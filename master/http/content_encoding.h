#pragma once
// gzip content coding for answers the master keeps ready: a cached answer
// (ResponseCache) carries its body compressed once, and a client whose
// Accept-Encoding takes gzip (every browser) gets those bytes with
// Content-Encoding: gzip. Nothing is compressed per request, so a polled
// answer costs the same CPU either way and moves a fraction of the bytes.
// Transport-neutral (no Beast).
#include <cstddef>
#include <string>
#include <string_view>

#include "master/http/api_types.h"

namespace ring {

// Bodies smaller than this are sent as they are.
inline constexpr size_t kMinGzipBody = 1024;

// The gzip member (RFC 1952) of `data`, at zlib's fastest level.
std::string Gzip(std::string_view data);

// Whether an Accept-Encoding value accepts gzip: "gzip" (or "x-gzip") or "*"
// with a q-value above 0, an explicit "gzip;q=0" winning over "*".
bool AcceptsGzip(std::string_view accept_encoding);

// The ETag of the gzip form of an answer whose identity ETag is `etag`: a
// strong tag must differ between the two codings of one resource.
std::string GzipEtag(const std::string& etag);

// For a 200 answer to GET or HEAD that carries res.gzip_body: adds
// "Vary: Accept-Encoding", and when the request accepts gzip, swaps in the
// compressed body with Content-Encoding: gzip and its own ETag (so run it
// before ApplyConditionalGet).
void ApplyContentEncoding(const ApiRequest& req, ApiResponse& res);

}  // namespace ring
