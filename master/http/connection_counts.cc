#include "master/http/connection_counts.h"

namespace ring {

ConnectionCounts::Ticket::Ticket(Ticket&& other) noexcept
    : counts_(other.counts_),
      address_(std::move(other.address_)),
      refusal_(other.refusal_),
      agent_(other.agent_) {
  other.counts_ = nullptr;
}

ConnectionCounts::Ticket::~Ticket() {
  if (counts_ != nullptr) counts_->Close(address_, agent_);
}

void ConnectionCounts::Ticket::BecomeAgent() {
  if (agent_ || counts_ == nullptr) return;
  agent_ = true;
  counts_->MoveToAgents(address_);
}

ConnectionCounts::Ticket ConnectionCounts::Open(const std::string& address) {
  std::lock_guard lock(mu_);
  const uint32_t from_address = ++per_address_[address];
  ++users_;
  ConnectionRefusal refusal = ConnectionRefusal::kNone;
  if (from_address > max_per_address_)
    refusal = ConnectionRefusal::kPerAddress;
  else if (users_ > max_connections_)
    refusal = ConnectionRefusal::kTotal;
  return Ticket(*this, address, refusal);
}

void ConnectionCounts::MoveToAgents(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = per_address_.find(address);
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
  --users_;
  ++agents_;
}

void ConnectionCounts::Close(const std::string& address, bool agent) {
  std::lock_guard lock(mu_);
  if (agent) {
    --agents_;
    return;
  }
  auto it = per_address_.find(address);
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
  --users_;
}

uint32_t ConnectionCounts::users() const {
  std::lock_guard lock(mu_);
  return users_;
}

uint32_t ConnectionCounts::agents() const {
  std::lock_guard lock(mu_);
  return agents_;
}

}  // namespace ring
