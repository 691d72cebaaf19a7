#include "master/http/content_encoding.h"

#include <zlib.h>

#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "master/http/conditional_get.h"
#include "master/http/url_codec.h"

namespace ring {
namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// The q-value of one Accept-Encoding element's parameters ("q=0.5"); 1 when
// absent, 0 when malformed (a client that garbles it gets identity).
double QValue(std::string_view params) {
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view p = TrimOws(params.substr(0, semi));
    if (p.size() >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
      const std::string value(TrimOws(p.substr(2)));
      char* end = nullptr;
      const double q = std::strtod(value.c_str(), &end);
      return end == value.c_str() || *end != '\0' || q < 0 || q > 1 ? 0 : q;
    }
    if (semi == std::string_view::npos) break;
    params.remove_prefix(semi + 1);
  }
  return 1;
}

}  // namespace

std::string Gzip(std::string_view data) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: deflateInit2 failed");
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib: deflate did not finish");
  return out;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  double gzip = -1, any = -1;
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    const std::string_view element = accept_encoding.substr(0, comma);
    const size_t semi = element.find(';');
    const std::string_view coding = TrimOws(element.substr(0, semi));
    const double q = semi == std::string_view::npos ? 1 : QValue(element.substr(semi + 1));
    if (EqualsNoCase(coding, "gzip") || EqualsNoCase(coding, "x-gzip"))
      gzip = q;
    else if (coding == "*")
      any = q;
    if (comma == std::string_view::npos) break;
    accept_encoding.remove_prefix(comma + 1);
  }
  return gzip >= 0 ? gzip > 0 : any > 0;
}

std::string GzipEtag(const std::string& etag) {
  if (etag.size() >= 2 && etag.back() == '"') return etag.substr(0, etag.size() - 1) + "-gzip\"";
  return etag;
}

void ApplyContentEncoding(const ApiRequest& req, ApiResponse& res) {
  if (req.method != "GET" && req.method != "HEAD") return;
  if (res.status != 200 || !res.gzip_body) return;
  res.headers.emplace_back("Vary", "Accept-Encoding");
  if (!AcceptsGzip(req.Header("accept-encoding"))) return;
  if (res.etag.empty()) res.etag = BodyEtag(res.body);
  res.etag = GzipEtag(res.etag);
  res.body = *res.gzip_body;
  res.headers.emplace_back("Content-Encoding", "gzip");
}

}  // namespace ring
