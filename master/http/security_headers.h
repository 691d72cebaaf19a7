#pragma once
// The headers every answer of the master carries so a browser cannot be
// turned against its user: the web UI's pages may run only the UI's own
// scripts and styles (no inline code, no eval) and talk only to this master;
// nothing the master serves may be framed by another site (clickjacking),
// sniffed into another content type, or leak its URL in a Referer.
#include "master/http/api_types.h"

namespace ring {

enum class AnswerKind {
  kPage,  // the web UI's files
  kApi,   // REST answers and errors: nothing in them is ever run
};

// The Content-Security-Policy of each kind of answer.
const char* ContentSecurityPolicy(AnswerKind kind);

// Adds Content-Security-Policy, X-Frame-Options, X-Content-Type-Options and
// Referrer-Policy to `response` (a header already set is left alone).
void AddSecurityHeaders(ApiResponse& response, AnswerKind kind);

}  // namespace ring
