// The text around the proxy's cookie: paths, Set-Cookie, Cookie headers.
#include <gtest/gtest.h>

#include "master/proxy/proxy_cookies.h"

namespace ring {
namespace {

TEST(ProxyCookies, PathsNameOneTask) {
  auto p = ParseProxyPath("/proxy/12/lab/tree?x=1");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->task_id, 12);
  EXPECT_TRUE(p->slash);
  auto bare = ParseProxyPath("/proxy/12?x=1");
  ASSERT_TRUE(bare);
  EXPECT_FALSE(bare->slash);
  EXPECT_TRUE(ParseProxyPath("/proxy/12"));
  for (const char* bad : {"/proxy/", "/proxy/x/", "/proxy/12x/", "/proxy/012/", "/proxy/0/", "/proxy//1/",
                          "/api/v1/tasks/1", "/proxy/1234567890123456/", "/proxy/-1/"})
    EXPECT_FALSE(ParseProxyPath(bad)) << bad;
}

TEST(ProxyCookies, TicketPaths) {
  EXPECT_EQ(ParseTicketPath("/proxy-ticket/abc123"), "abc123");
  EXPECT_EQ(ParseTicketPath("/proxy-ticket/abc123?utm=1"), "abc123");
  EXPECT_FALSE(ParseTicketPath("/proxy-ticket/"));
  EXPECT_FALSE(ParseTicketPath("/proxy-ticket/../x"));
  EXPECT_FALSE(ParseTicketPath("/proxy-ticket/abc/def"));
  EXPECT_FALSE(ParseTicketPath("/proxy/1/"));
}

TEST(ProxyCookies, TheSessionCookieIsHttpOnlyAndScopedToItsTask) {
  const std::string plain = SessionCookie("v", 7, 3600, false);
  EXPECT_EQ(plain, "ring_proxy=v; Path=/proxy/7/; Max-Age=3600; HttpOnly; SameSite=Lax");
  EXPECT_EQ(SessionCookie("v", 7, 3600, true), plain + "; Secure");
}

TEST(ProxyCookies, CookieHeadersAreReadAndStrippedOfTheProxysOwn) {
  const std::string header = "_xsrf=abc; ring_proxy=one;ring_proxy=\"two\"; other = x ; ring_proxyx=3";
  EXPECT_EQ(CookieValues(header, kProxyCookie), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(WithoutCookie(header, kProxyCookie), "_xsrf=abc; other = x; ring_proxyx=3");
  EXPECT_EQ(WithoutCookie("ring_proxy=a", kProxyCookie), "");
  EXPECT_TRUE(CookieValues("", kProxyCookie).empty());
}

TEST(ProxyCookies, ASetCookieOfTheProxysNameIsRecognised) {
  EXPECT_TRUE(SetsCookie("ring_proxy=x; Path=/proxy/2/", kProxyCookie));
  EXPECT_TRUE(SetsCookie(" ring_proxy =x", kProxyCookie));
  EXPECT_FALSE(SetsCookie("_xsrf=ring_proxy; Path=/", kProxyCookie));
  EXPECT_FALSE(SetsCookie("ring_proxy2=x", kProxyCookie));
}

}  // namespace
}  // namespace ring
