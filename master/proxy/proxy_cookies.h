#pragma once
// The text the proxy reads and writes around its cookie: the task a path
// names, the cookie's Set-Cookie line, the values of a Cookie header and the
// header without them (what is forwarded to the task). Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ring {

// The cookie's name. One name for every task: its Path keeps a browser from
// sending task A's cookie to task B, and the proxy checks the task anyway.
inline constexpr std::string_view kProxyCookie = "ring_proxy";

// "/proxy/<task id>" or "/proxy/<task id>/..." (a query may follow): the
// task id, and whether the path goes on past it with a '/'.
struct ProxyPath {
  int64_t task_id = 0;
  bool slash = false;
};
std::optional<ProxyPath> ParseProxyPath(std::string_view target);
// "/proxy-ticket/<ticket>": the ticket.
std::optional<std::string> ParseTicketPath(std::string_view target);

// Set-Cookie for a session of `task_id`: HttpOnly, SameSite=Lax,
// Path=/proxy/<task>/, Max-Age, and Secure when the proxy speaks TLS.
std::string SessionCookie(const std::string& value, int64_t task_id, int64_t max_age_seconds, bool secure);
// Every value of cookie `name` in a Cookie header ("a=1; b=2").
std::vector<std::string> CookieValues(std::string_view header, std::string_view name);
// The Cookie header without cookie `name` (empty when nothing is left).
std::string WithoutCookie(std::string_view header, std::string_view name);
// Whether a Set-Cookie line sets cookie `name` (a task's server must not
// set or overwrite the proxy's own).
bool SetsCookie(std::string_view set_cookie, std::string_view name);

}  // namespace ring
