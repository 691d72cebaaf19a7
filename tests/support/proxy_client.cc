#include "tests/support/proxy_client.h"

#include <gtest/gtest.h>

#include <cctype>

#include "tests/support/raw_connection.h"

namespace ring::testing {

Answer Exchange(int port, const std::string& method, const std::string& target,
                const std::map<std::string, std::string>& headers, const std::string& body) {
  RawConnection c(port);
  EXPECT_TRUE(c.connected());
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  EXPECT_TRUE(c.Send(req));
  const std::string raw = c.ReadAll();
  Answer a;
  const auto end = raw.find("\r\n\r\n");
  if (raw.size() < 12 || end == std::string::npos) return a;
  a.status = std::stoi(raw.substr(9, 3));
  size_t at = raw.find("\r\n") + 2;
  while (at < end) {
    const auto eol = raw.find("\r\n", at);
    const std::string line = raw.substr(at, eol - at);
    const auto colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto value = line.find_first_not_of(' ', colon + 1);
    a.headers[name] = value == std::string::npos ? "" : line.substr(value);
    at = eol + 2;
  }
  a.body = raw.substr(end + 4);
  if (a.headers["transfer-encoding"] == "chunked") {  // unchunk
    std::string plain;
    size_t p = 0;
    for (;;) {
      const auto eol = a.body.find("\r\n", p);
      if (eol == std::string::npos) break;
      const size_t n = std::stoul(a.body.substr(p, eol - p), nullptr, 16);
      if (n == 0) break;
      plain += a.body.substr(eol + 2, n);
      p = eol + 2 + n + 2;
    }
    a.body = plain;
  }
  return a;
}

// The cookie value a one-time link's answer sets, after checking its attributes.
std::string RedeemLink(const std::string& url, int64_t task) {
  const int port = PortOf(url);
  const std::string target = url.substr(url.find('/', url.find("//") + 2));
  Answer a = Exchange(port, "GET", target, {});
  EXPECT_EQ(a.status, 303) << a.body;
  EXPECT_EQ(a.headers["location"], "/proxy/" + std::to_string(task) + "/");
  const std::string cookie = a.headers["set-cookie"];
  EXPECT_NE(cookie.find("; Path=/proxy/" + std::to_string(task) + "/;"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Lax"), std::string::npos) << cookie;
  if (cookie.rfind("ring_proxy=", 0) != 0) return "";
  return cookie.substr(11, cookie.find(';') - 11);
}

}  // namespace ring::testing
