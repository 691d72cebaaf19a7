#include "master/auth/terminal_tickets.h"

#include "master/auth/tokens.h"

namespace ring {

Result<std::string> TerminalTickets::Issue(const TerminalGrant& grant, Clock::time_point now) {
  std::string ticket = NewToken();
  std::lock_guard lock(mu_);
  if (tickets_.size() >= options_.max_tickets)
    std::erase_if(tickets_, [now](const auto& e) { return e.second.expires <= now; });
  if (tickets_.size() >= options_.max_tickets)
    return Status(ErrorCode::kTooManyRequests,
                  std::to_string(options_.max_tickets) +
                      " terminal tickets wait to be used, the master's limit; try again in a minute");
  tickets_[HashToken(ticket)] = {grant, now + options_.ttl};
  return ticket;
}

Result<TerminalGrant> TerminalTickets::Redeem(const std::string& ticket, Clock::time_point now) {
  const Status refused(ErrorCode::kUnauthenticated,
                       "this terminal ticket was used already, has expired or is not one; ask for a new one "
                       "(POST /api/v1/shells/{id}/terminal/ticket)");
  if (ticket.empty()) return refused;
  const std::string hash = HashToken(ticket);
  std::lock_guard lock(mu_);
  auto it = tickets_.find(hash);
  if (it == tickets_.end()) return refused;
  Entry entry = std::move(it->second);
  tickets_.erase(it);  // once, whatever follows
  if (entry.expires <= now) return refused;
  return entry.grant;
}

size_t TerminalTickets::size() const {
  std::lock_guard lock(mu_);
  return tickets_.size();
}

}  // namespace ring
