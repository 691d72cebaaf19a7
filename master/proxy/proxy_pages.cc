#include "master/proxy/proxy_pages.h"

#include <utility>  // before Asio

namespace ring {

namespace http = boost::beast::http;

namespace {

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The headers of the proxy's own answers (its error pages and the ticket's
// redirect): nothing in them runs, frames them, is cached or leaks a referrer.
template <class Fields>
void AddOwnHeaders(Fields& fields) {
  fields.set(http::field::server, "ringmaster-proxy");
  fields.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
  fields.set("X-Content-Type-Options", "nosniff");
  fields.set("X-Frame-Options", "DENY");
  fields.set("Referrer-Policy", "no-referrer");
  fields.set(http::field::cache_control, "no-store");
}

}  // namespace

http::response<http::string_body> ProxyPage(http::status status, const std::string& title,
                                            const std::string& text, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{status, version};
  AddOwnHeaders(res);
  res.set(http::field::content_type, "text/html; charset=utf-8");
  res.body() = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + HtmlEscape(title) +
               "</title></head>\n<body><h1>" + HtmlEscape(title) + "</h1>\n<p>" + HtmlEscape(text) +
               "</p></body></html>\n";
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

http::status ProxyStatusOf(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kUnauthenticated:
      return http::status::unauthorized;
    case ErrorCode::kPermissionDenied:
      return http::status::forbidden;
    case ErrorCode::kNotFound:
      return http::status::not_found;
    case ErrorCode::kTooManyRequests:
      return http::status::too_many_requests;
    case ErrorCode::kUnavailable:
      return http::status::service_unavailable;
    default:
      return http::status::internal_server_error;
  }
}

}  // namespace ring
