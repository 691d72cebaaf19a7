#include "master/proxy/proxy_cookies.h"

#include <cctype>

namespace ring {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls f(name, value, whole pair) for each "name=value" of a Cookie header.
template <class F>
void ForEachCookie(std::string_view header, F f) {
  while (!header.empty()) {
    const auto end = header.find(';');
    std::string_view pair = Trim(header.substr(0, end));
    header = end == std::string_view::npos ? std::string_view() : header.substr(end + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string_view name = Trim(pair.substr(0, eq));
    std::string_view value = eq == std::string_view::npos ? std::string_view() : Trim(pair.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    f(name, value, pair);
  }
}

}  // namespace

std::optional<ProxyPath> ParseProxyPath(std::string_view target) {
  constexpr std::string_view kPrefix = "/proxy/";
  if (target.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  target.remove_prefix(kPrefix.size());
  size_t digits = 0;
  while (digits < target.size() && std::isdigit(static_cast<unsigned char>(target[digits]))) ++digits;
  if (digits == 0 || digits > 15 || (digits > 1 && target[0] == '0')) return std::nullopt;
  const char next = digits < target.size() ? target[digits] : '\0';
  if (next != '\0' && next != '/' && next != '?') return std::nullopt;
  ProxyPath out;
  out.task_id = std::stoll(std::string(target.substr(0, digits)));
  out.slash = next == '/';
  if (out.task_id <= 0) return std::nullopt;
  return out;
}

std::optional<std::string> ParseTicketPath(std::string_view target) {
  constexpr std::string_view kPrefix = "/proxy-ticket/";
  if (target.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  target.remove_prefix(kPrefix.size());
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  if (target.empty() || target.size() > 128) return std::nullopt;
  for (char c : target)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return std::string(target);
}

std::string SessionCookie(const std::string& value, int64_t task_id, int64_t max_age_seconds, bool secure) {
  std::string out = std::string(kProxyCookie) + "=" + value + "; Path=/proxy/" + std::to_string(task_id) +
                    "/; Max-Age=" + std::to_string(max_age_seconds) + "; HttpOnly; SameSite=Lax";
  if (secure) out += "; Secure";
  return out;
}

std::vector<std::string> CookieValues(std::string_view header, std::string_view name) {
  std::vector<std::string> out;
  ForEachCookie(header, [&](std::string_view n, std::string_view v, std::string_view) {
    if (n == name) out.emplace_back(v);
  });
  return out;
}

std::string WithoutCookie(std::string_view header, std::string_view name) {
  std::string out;
  ForEachCookie(header, [&](std::string_view n, std::string_view, std::string_view pair) {
    if (n == name) return;
    if (!out.empty()) out += "; ";
    out += pair;
  });
  return out;
}

bool SetsCookie(std::string_view set_cookie, std::string_view name) {
  std::string_view first = set_cookie.substr(0, set_cookie.find(';'));
  return Trim(first.substr(0, first.find('='))) == name;
}

}  // namespace ring
