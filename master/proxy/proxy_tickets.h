#pragma once
// The one-time tickets of the task proxy and the cookie sessions they turn
// into. A signed-in user asks the main API for a link (POST
// /api/v1/tasks/{id}/proxy/link); its ticket opens the proxy's origin once,
// within a minute, and becomes a cookie scoped to that one task. Only
// SHA-256 hashes of tickets and cookies are kept. Pure: times are passed in.
// Thread-safe (mu_): the API's handlers issue, the proxy's connections
// redeem and check, on any io thread.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"

namespace ring {

struct ProxyTicketOptions {
  std::chrono::seconds ticket_ttl{60};          // a link must be opened within this
  std::chrono::seconds session_ttl{12 * 3600};  // how long the cookie it sets opens its task
  size_t max_tickets = 10000;                   // unredeemed tickets kept at once; more are refused
  size_t max_sessions = 100000;                 // cookies kept at once; the oldest goes first
};

// Who a ticket or cookie lets in, and to which task.
struct ProxyGrant {
  int64_t task_id = 0;
  std::string username;
};

class ProxyTickets {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ProxyTickets(ProxyTicketOptions options = {}) : options_(options) {}

  const ProxyTicketOptions& options() const { return options_; }
  // A new ticket (64 hex digits) for `grant`; kTooManyRequests when
  // max_tickets are waiting.
  Result<std::string> Issue(const ProxyGrant& grant, Clock::time_point now);
  // The cookie value (64 hex digits) of a new session for the ticket's
  // grant. A ticket works once: redeemed, expired or unknown it is
  // kUnauthenticated, and it is forgotten either way.
  struct Session {
    std::string cookie;
    ProxyGrant grant;
  };
  Result<Session> Redeem(const std::string& ticket, Clock::time_point now);
  // The grant of a cookie value while its session lasts; nullopt otherwise.
  std::optional<ProxyGrant> Check(const std::string& cookie, Clock::time_point now) const;

  size_t tickets() const;
  size_t sessions() const;

 private:
  struct Entry {
    ProxyGrant grant;
    Clock::time_point expires;
  };
  static void DropExpired(std::map<std::string, Entry>& entries, Clock::time_point now);

  const ProxyTicketOptions options_;
  mutable std::mutex mu_;                  // guards tickets_ and sessions_
  std::map<std::string, Entry> tickets_;   // by SHA-256 of the ticket
  std::map<std::string, Entry> sessions_;  // by SHA-256 of the cookie value
};

}  // namespace ring
