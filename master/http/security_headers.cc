#include "master/http/security_headers.h"

namespace ring {

const char* ContentSecurityPolicy(AnswerKind kind) {
  switch (kind) {
    case AnswerKind::kPage:
      // The Vite build has no inline script or style; uPlot draws on a
      // canvas and sets styles through the DOM, which style-src allows.
      // The terminal (xterm.js) adds <style> elements of its own (its
      // sizes, colours and cursor, measured at run time), which
      // style-src-elem lets in; style attributes in markup stay refused.
      return "default-src 'self'; script-src 'self'; style-src 'self'; "
             "style-src-elem 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; "
             "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
             "frame-ancestors 'none'";
    case AnswerKind::kApi:
      return "default-src 'none'; frame-ancestors 'none'";
  }
  return "default-src 'none'; frame-ancestors 'none'";
}

void AddSecurityHeaders(ApiResponse& response, AnswerKind kind) {
  const auto add = [&response](const char* name, const char* value) {
    if (response.Header(name).empty()) response.headers.emplace_back(name, value);
  };
  add("Content-Security-Policy", ContentSecurityPolicy(kind));
  add("X-Frame-Options", "DENY");
  add("X-Content-Type-Options", "nosniff");
  add("Referrer-Policy", "no-referrer");
}

}  // namespace ring
