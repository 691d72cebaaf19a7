#include "master/proxy/proxy_headers.h"

#include <cctype>
#include <string_view>
#include <vector>

#include "master/proxy/proxy_cookies.h"

namespace ring {

namespace http = boost::beast::http;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Removes the hop-by-hop headers: those the Connection header names and the
// fixed ones (RFC 9110 7.6.1). The body's framing (Content-Length,
// Transfer-Encoding) stays: the serializer writes the body as it was read.
template <bool isRequest, class Body>
void DropHopByHop(http::message<isRequest, Body>& m, bool upgrade) {
  std::vector<std::string> named;
  {
    std::string_view list = m[http::field::connection];
    while (!list.empty()) {
      auto comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      const std::string name = Lower(item);
      if (!name.empty() && name != "close" && name != "keep-alive" && name != "upgrade" &&
          name != "content-length" && name != "transfer-encoding")
        named.push_back(name);
    }
  }
  for (const auto& name : named) m.erase(name);
  m.erase(http::field::keep_alive);
  m.erase("Proxy-Connection");
  m.erase(http::field::te);
  m.erase(http::field::trailer);
  m.erase(http::field::proxy_authorization);
  m.erase(http::field::proxy_authenticate);
  if (!upgrade) {
    m.erase(http::field::upgrade);
    m.erase(http::field::connection);
  }
}

}  // namespace

// What the task's server gets: never the proxy's cookie, never the
// client's Authorization header (no Ringmaster credential goes upstream;
// the service's own token, when it announced one, does), no
// hop-by-hop headers; the client's address and scheme as X-Forwarded-*.
void PrepareUpstreamRequest(http::request<http::buffer_body>& req, const std::string& peer, bool tls,
                            bool upgrade, const std::string& service_token) {
  DropHopByHop(req, upgrade);
  req.erase(http::field::authorization);
  if (!service_token.empty()) req.set(http::field::authorization, "token " + service_token);
  std::string cookies;
  for (const auto& field : req)
    if (field.name() == http::field::cookie) {
      std::string kept = WithoutCookie(field.value(), kProxyCookie);
      if (kept.empty()) continue;
      if (!cookies.empty()) cookies += "; ";
      cookies += kept;
    }
  req.erase(http::field::cookie);
  if (!cookies.empty()) req.set(http::field::cookie, cookies);
  std::string forwarded(req["X-Forwarded-For"]);
  req.set("X-Forwarded-For", forwarded.empty() ? peer : forwarded + ", " + peer);
  req.set("X-Forwarded-Proto", tls ? "https" : "http");
  if (upgrade) {
    req.set(http::field::connection, "Upgrade");
  } else {
    req.keep_alive(true);
  }
}

// What the browser gets of the task's answer: its headers, minus hop-by-hop
// ones and any Set-Cookie of the proxy's own cookie's name.
void PrepareClientResponse(http::response<http::buffer_body>& res, bool upgrade) {
  DropHopByHop(res, upgrade);
  std::vector<std::string> kept;
  bool dropped = false;
  for (const auto& field : res)
    if (field.name() == http::field::set_cookie) {
      if (SetsCookie(field.value(), kProxyCookie))
        dropped = true;
      else
        kept.emplace_back(field.value());
    }
  if (dropped) {
    res.erase(http::field::set_cookie);
    for (const auto& c : kept) res.insert(http::field::set_cookie, c);
  }
}

}  // namespace ring
