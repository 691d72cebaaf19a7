#pragma once
// Decides on one request to the task proxy from its header alone: a
// one-time link (the cookie of its task and a redirect), a path that is no
// task's, a missing or foreign cookie (an Authorization header opens
// nothing), a user no longer allowed, a task without a service, a
// WebSocket of another origin; or, when none of these, whom to forward it
// for and where. Runs on the connection's strand; reads the thread-safe
// parts of TaskProxy and, through its access check, the store.
#include <optional>
#include <string>

#include <utility>  // before Asio

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "master/proxy/proxy_tickets.h"
#include "master/proxy/service_registry.h"

namespace ring {

class TaskProxy;

// What becomes of one request: answered by the proxy itself (`reply`), or
// forwarded to `service` on behalf of `grant`.
struct ProxyAdmission {
  std::optional<boost::beast::http::response<boost::beast::http::string_body>> reply;
  ProxyGrant grant;
  AnnouncedService service;
};

// `tls`: the proxy speaks HTTPS (its cookie is Secure). `keep_alive`: what a
// reply says about the connection.
ProxyAdmission AdmitProxyRequest(TaskProxy& proxy, bool tls,
                                 const boost::beast::http::request<boost::beast::http::buffer_body>& req,
                                 const std::string& peer, bool keep_alive);

}  // namespace ring
