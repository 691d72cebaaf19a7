#pragma once
// One-time tickets that open a shell's terminal WebSocket from a browser,
// which cannot put its bearer token on a WebSocket. A signed-in user asks
// for one (POST /api/v1/shells/{id}/terminal/ticket) and puts it in the
// WebSocket's URL (?ticket=); it works once, within its ttl, for that user
// and that shell only. Only SHA-256 hashes of tickets are kept. Pure: times
// are passed in. Thread-safe (mu_): the API's handlers issue and the
// terminal's admission redeems, on any io thread.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "common/status.h"

namespace ring {

struct TerminalTicketOptions {
  std::chrono::seconds ttl{60};  // a ticket must be used within this
  size_t max_tickets = 10000;    // unused tickets kept at once; more are refused
};

// Whom a ticket lets in, and to which task's terminal.
struct TerminalGrant {
  int64_t task_id = 0;
  std::string username;
};

class TerminalTickets {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TerminalTickets(TerminalTicketOptions options = {}) : options_(options) {}

  const TerminalTicketOptions& options() const { return options_; }
  // A new ticket (64 hex digits: 256 random bits, safe in a URL) for
  // `grant`; kTooManyRequests when max_tickets wait to be used.
  Result<std::string> Issue(const TerminalGrant& grant, Clock::time_point now);
  // The ticket's grant. A ticket works once: used, expired or unknown it is
  // kUnauthenticated, and it is forgotten either way.
  Result<TerminalGrant> Redeem(const std::string& ticket, Clock::time_point now);

  size_t size() const;

 private:
  struct Entry {
    TerminalGrant grant;
    Clock::time_point expires;
  };

  const TerminalTicketOptions options_;
  mutable std::mutex mu_;                 // guards tickets_
  std::map<std::string, Entry> tickets_;  // by SHA-256 of the ticket
};

}  // namespace ring
