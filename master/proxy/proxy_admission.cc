#include "master/proxy/proxy_admission.h"

#include <chrono>

#include <utility>  // before Asio

#include <spdlog/spdlog.h>
#include <boost/beast/websocket/rfc6455.hpp>

#include "master/proxy/proxy_cookies.h"
#include "master/proxy/proxy_pages.h"
#include "master/proxy/task_proxy.h"

namespace ring {

namespace beast = boost::beast;
namespace http = beast::http;

ProxyAdmission AdmitProxyRequest(TaskProxy& proxy, bool tls, const http::request<http::buffer_body>& req,
                                 const std::string& peer, bool keep_alive) {
  const unsigned version = req.version();
  const std::string target(req.target());
  auto reply = [&](http::status status, const std::string& title, const std::string& text) {
    ProxyAdmission a;
    a.reply = ProxyPage(status, title, text, version, keep_alive);
    return a;
  };

  // A one-time link: the cookie of its task, then the task's page.
  if (auto ticket = ParseTicketPath(target)) {
    if (req.method() != http::verb::get)  // a HEAD (a link preview) must not use it up
      return reply(http::status::method_not_allowed, "Not allowed", "Open proxy links with GET.");
    auto session = proxy.tickets().Redeem(*ticket, std::chrono::steady_clock::now());
    if (!session.ok())
      return reply(http::status::unauthorized, "Link used or expired",
                   session.status().message() +
                       " (ring task proxy-link ID, or open the service again in the web UI).");
    const int64_t task = session->grant.task_id;
    if (Status allowed = proxy.Allows(session->grant.username, task); !allowed.ok())
      return reply(ProxyStatusOf(allowed), "Not allowed", allowed.message());
    ProxyAdmission out = reply(http::status::see_other, "Opening task " + std::to_string(task),
                               "Go on to /proxy/" + std::to_string(task) + "/.");
    out.reply->set(http::field::location, "/proxy/" + std::to_string(task) + "/");
    out.reply->set(http::field::set_cookie,
                   SessionCookie(session->cookie, task, proxy.tickets().options().session_ttl.count(), tls));
    spdlog::info("[proxy] task {}: {} opened a link from {}", task, session->grant.username, peer);
    return out;
  }

  auto path = ParseProxyPath(target);
  if (!path)
    return reply(http::status::not_found, "Not found", "Tasks' services are served under /proxy/<task id>/.");
  const int64_t task = path->task_id;
  const std::string base = "/proxy/" + std::to_string(task) + "/";
  if (!path->slash) {
    ProxyAdmission out = reply(http::status::permanent_redirect, "Moved", "See " + base + ".");
    const auto query = target.find('?');
    out.reply->set(http::field::location, base + (query == std::string::npos ? "" : target.substr(query)));
    return out;
  }

  // Who: the cookie of this task only. An Authorization header opens nothing here.
  std::optional<ProxyGrant> grant;
  bool other_task = false;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& field : req) {
    if (field.name() != http::field::cookie) continue;
    for (const auto& value : CookieValues(field.value(), kProxyCookie)) {
      auto g = proxy.tickets().Check(value, now);
      if (g && g->task_id == task) grant = g;
      if (g && g->task_id != task) other_task = true;
    }
  }
  if (!grant && other_task)
    return reply(http::status::forbidden, "Not allowed",
                 "Your proxy sign-in is for another task. Open task " + std::to_string(task) +
                     " through Ringmaster to get one for it.");
  if (!grant)
    return reply(http::status::unauthorized, "Sign-in needed",
                 "Open task " + std::to_string(task) +
                     "'s service through Ringmaster (ring task proxy-link " + std::to_string(task) +
                     ", or the web UI): the link signs this browser in to it.");
  if (Status allowed = proxy.Allows(grant->username, task); !allowed.ok())
    return reply(ProxyStatusOf(allowed), "Not allowed", allowed.message());
  auto service = proxy.services().Lookup(task);
  if (!service)
    return reply(http::status::bad_gateway, "No service",
                 "Task " + std::to_string(task) +
                     " has announced no service: it may still be starting, or it has ended.");
  if (beast::websocket::is_upgrade(req)) {
    // A WebSocket of another site's page (cross-site WebSocket hijacking) is refused.
    std::string_view origin = req[http::field::origin];
    if (!origin.empty() && origin != proxy.external_url())
      return reply(http::status::forbidden, "Not allowed",
                   "WebSockets are opened only by pages of " + proxy.external_url() + ", not " +
                       std::string(origin) + ".");
  }
  ProxyAdmission out;
  out.grant = *grant;
  out.service = *service;
  return out;
}

}  // namespace ring
