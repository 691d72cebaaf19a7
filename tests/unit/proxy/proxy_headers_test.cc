// What the proxy changes in forwarded headers: nothing of Ringmaster's goes
// to a task's server, nothing of the proxy's cookie comes from it.
#include <gtest/gtest.h>

#include <utility>  // before Asio

#include <boost/beast/http/field.hpp>

#include "master/proxy/proxy_headers.h"

namespace ring {
namespace {

namespace http = boost::beast::http;

TEST(ProxyHeaders, TheTasksServerGetsNoCredentialOfRingmasters) {
  http::request<http::buffer_body> req{http::verb::post, "/proxy/3/api/contents", 11};
  req.set(http::field::host, "proxy.example.com:8081");
  req.set(http::field::authorization, "Bearer 0123");
  req.set(http::field::proxy_authorization, "Basic eA==");
  req.insert(http::field::cookie, "_xsrf=abc; ring_proxy=secret");
  req.insert(http::field::cookie, "ring_proxy=other; theme=dark");
  req.set(http::field::connection, "keep-alive, X-Hop");
  req.set("X-Hop", "1");
  req.set(http::field::keep_alive, "timeout=5");
  req.set(http::field::te, "trailers");
  req.set(http::field::content_length, "12");
  PrepareUpstreamRequest(req, "10.0.0.9", true, false);
  EXPECT_EQ(req.count(http::field::authorization), 0u);
  EXPECT_EQ(req.count(http::field::proxy_authorization), 0u);
  EXPECT_EQ(req[http::field::cookie], "_xsrf=abc; theme=dark");
  EXPECT_EQ(req.count("X-Hop"), 0u);
  EXPECT_EQ(req.count(http::field::keep_alive), 0u);
  EXPECT_EQ(req.count(http::field::te), 0u);
  EXPECT_EQ(req[http::field::host],
            "proxy.example.com:8081");                // the browser's, for the server's origin checks
  EXPECT_EQ(req[http::field::content_length], "12");  // the body's framing stays
  EXPECT_EQ(req["X-Forwarded-For"], "10.0.0.9");
  EXPECT_EQ(req["X-Forwarded-Proto"], "https");

  http::request<http::buffer_body> only_ours{http::verb::get, "/proxy/3/", 11};
  only_ours.set(http::field::cookie, "ring_proxy=secret");
  only_ours.set("X-Forwarded-For", "192.0.2.1");
  PrepareUpstreamRequest(only_ours, "10.0.0.9", false, false);
  EXPECT_EQ(only_ours.count(http::field::cookie), 0u);
  EXPECT_EQ(only_ours["X-Forwarded-For"], "192.0.2.1, 10.0.0.9");
  EXPECT_EQ(only_ours["X-Forwarded-Proto"], "http");
}

TEST(ProxyHeaders, AWebSocketUpgradeKeepsItsUpgrade) {
  http::request<http::buffer_body> req{http::verb::get, "/proxy/3/api/kernels/k/channels", 11};
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
  PrepareUpstreamRequest(req, "10.0.0.9", false, true);
  EXPECT_EQ(req[http::field::connection], "Upgrade");
  EXPECT_EQ(req[http::field::upgrade], "websocket");
  EXPECT_EQ(req[http::field::sec_websocket_key], "dGhlIHNhbXBsZSBub25jZQ==");
}

TEST(ProxyHeaders, TheServerCannotSetTheProxysCookie) {
  http::response<http::buffer_body> res{http::status::ok, 11};
  res.insert(http::field::set_cookie, "_xsrf=abc; Path=/proxy/3/");
  res.insert(http::field::set_cookie, "ring_proxy=forged; Path=/proxy/4/");
  res.insert(http::field::set_cookie, "username-x=1");
  res.set(http::field::connection, "close");
  PrepareClientResponse(res, false);
  std::vector<std::string> cookies;
  for (const auto& f : res)
    if (f.name() == http::field::set_cookie) cookies.emplace_back(f.value());
  EXPECT_EQ(cookies, (std::vector<std::string>{"_xsrf=abc; Path=/proxy/3/", "username-x=1"}));
  EXPECT_EQ(res.count(http::field::connection), 0u);
}

}  // namespace
}  // namespace ring
