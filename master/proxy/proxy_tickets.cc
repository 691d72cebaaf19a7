#include "master/proxy/proxy_tickets.h"

#include <algorithm>

#include "master/auth/tokens.h"

namespace ring {

void ProxyTickets::DropExpired(std::map<std::string, Entry>& entries, Clock::time_point now) {
  std::erase_if(entries, [now](const auto& e) { return e.second.expires <= now; });
}

Result<std::string> ProxyTickets::Issue(const ProxyGrant& grant, Clock::time_point now) {
  std::string ticket = NewToken();
  std::lock_guard lock(mu_);
  if (tickets_.size() >= options_.max_tickets) DropExpired(tickets_, now);
  if (tickets_.size() >= options_.max_tickets)
    return Status(ErrorCode::kTooManyRequests,
                  std::to_string(options_.max_tickets) +
                      " proxy links wait to be opened, the master's limit; try again in a minute");
  tickets_[HashToken(ticket)] = {grant, now + options_.ticket_ttl};
  return ticket;
}

Result<ProxyTickets::Session> ProxyTickets::Redeem(const std::string& ticket, Clock::time_point now) {
  const Status refused(ErrorCode::kUnauthenticated,
                       "this proxy link was used already, has expired or is not one; ask for a new one");
  if (ticket.empty()) return refused;
  std::string cookie = NewToken();
  std::lock_guard lock(mu_);
  auto it = tickets_.find(HashToken(ticket));
  if (it == tickets_.end()) return refused;
  Entry entry = it->second;
  tickets_.erase(it);  // once, whatever follows
  if (entry.expires <= now) return refused;
  if (sessions_.size() >= options_.max_sessions) DropExpired(sessions_, now);
  if (sessions_.size() >= options_.max_sessions) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
      return a.second.expires < b.second.expires;
    });
    sessions_.erase(oldest);
  }
  sessions_[HashToken(cookie)] = {entry.grant, now + options_.session_ttl};
  return Session{cookie, entry.grant};
}

std::optional<ProxyGrant> ProxyTickets::Check(const std::string& cookie, Clock::time_point now) const {
  if (cookie.empty()) return std::nullopt;
  const std::string hash = HashToken(cookie);
  std::lock_guard lock(mu_);
  auto it = sessions_.find(hash);
  if (it == sessions_.end() || it->second.expires <= now) return std::nullopt;
  return it->second.grant;
}

size_t ProxyTickets::tickets() const {
  std::lock_guard lock(mu_);
  return tickets_.size();
}

size_t ProxyTickets::sessions() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

}  // namespace ring
