#pragma once
// The task proxy's shared parts, owned by the master's composition root and
// read by the REST routes (links, announcements) and the proxy's listener:
// the tickets and cookie sessions, the announced services, the last
// activity of each task and the per-user connection limits. Each part is
// thread-safe on its own; the settings are fixed at start.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "master/proxy/proxy_activity.h"
#include "master/proxy/proxy_tickets.h"
#include "master/proxy/service_registry.h"
#include "master/proxy/user_connection_limits.h"

namespace ring {

// master.yaml `proxy: {listen, external_url, idle_timeout_ms, max_connections_per_user}`.
struct ProxySettings {
  // HOST:PORT of the proxy's own origin; port 0 picks one. Empty: the
  // master's listen host and a free port.
  std::string listen;
  // How browsers reach the proxy (scheme, host and port, no path), e.g.
  // https://proxy.example.com:8443; empty: the listener's address.
  std::string external_url;
  int64_t idle_timeout_ms = 15 * 60 * 1000;  // a proxied connection with no traffic either way is closed
  int64_t max_connections_per_user = 64;     // proxied connections of one user at once; more get a 503
};

class TaskProxy {
 public:
  // Whether `username` may open task `task_id` now: Ok for its owner and for
  // admins, while their account is active; kPermissionDenied (or kNotFound
  // for no such task) otherwise. Reads the store.
  using AccessCheck = std::function<Status(const std::string& username, int64_t task_id)>;

  TaskProxy(ProxySettings settings, ServiceRegistry::LivePredicate live, AccessCheck access,
            ProxyTicketOptions tickets = {})
      : settings_(std::move(settings)),
        access_(std::move(access)),
        tickets_(tickets),
        services_(std::move(live)),
        limits_(static_cast<uint32_t>(settings_.max_connections_per_user)) {}

  const ProxySettings& settings() const { return settings_; }
  // Where browsers reach the proxy; set once the listener is bound.
  void SetExternalUrl(std::string url) { external_url_ = std::move(url); }
  const std::string& external_url() const { return external_url_; }
  // <external_url>/proxy/<task>/
  std::string TaskUrl(int64_t task_id) const;
  // <external_url>/proxy-ticket/<ticket>
  std::string TicketUrl(const std::string& ticket) const;

  Status Allows(const std::string& username, int64_t task_id) const { return access_(username, task_id); }
  ProxyTickets& tickets() { return tickets_; }
  ServiceRegistry& services() { return services_; }
  ProxyActivity& activity() { return activity_; }
  UserConnectionLimits& limits() { return limits_; }

 private:
  const ProxySettings settings_;
  std::string external_url_;  // written once before the listener serves
  AccessCheck access_;
  ProxyTickets tickets_;
  ServiceRegistry services_;
  ProxyActivity activity_;
  UserConnectionLimits limits_;
};

}  // namespace ring
