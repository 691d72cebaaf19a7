#pragma once
// A client of the master's task proxy for tests, on raw sockets so that
// every header is the test's own: one request per connection, and the
// redemption of a one-time link (checking the cookie's attributes).
#include <cstdint>
#include <map>
#include <string>

namespace ring::testing {

struct Answer {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; the last of each
  std::string body;                            // unchunked
};

// One request on a connection of its own to the proxy (Connection: close).
Answer Exchange(int port, const std::string& method, const std::string& target,
                const std::map<std::string, std::string>& headers, const std::string& body = "");

// The cookie value a one-time link's answer sets, after checking (with
// gtest) that it redirects to the task's path with a cookie scoped to it.
std::string RedeemLink(const std::string& url, int64_t task);

}  // namespace ring::testing
