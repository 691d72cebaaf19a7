#include "master/http/connection_counts.h"

namespace ring {

ConnectionCounts::ConnectionCounts(uint32_t max_connections, uint32_t max_per_address,
                                   AddressRanges exempt_from_per_address)
    : state_(std::make_shared<State>(max_connections, max_per_address, std::move(exempt_from_per_address))) {}

ConnectionCounts::Ticket::Ticket(Ticket&& other) noexcept
    : counts_(std::move(other.counts_)),
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
  const bool exempt = state_->exempt.Contains(address);  // immutable: outside the lock
  std::lock_guard lock(state_->mu);
  // An exempt address has no entry, so closing its connections finds none.
  const uint32_t from_address = exempt ? 0 : ++state_->per_address[address];
  ++state_->users;
  ConnectionRefusal refusal = ConnectionRefusal::kNone;
  if (from_address > state_->max_per_address)
    refusal = ConnectionRefusal::kPerAddress;
  else if (state_->users > state_->max_connections)
    refusal = ConnectionRefusal::kTotal;
  return Ticket(state_, address, refusal);
}

void ConnectionCounts::State::MoveToAgents(const std::string& address) {
  std::lock_guard lock(mu);
  auto it = per_address.find(address);
  if (it != per_address.end() && --it->second == 0) per_address.erase(it);
  --users;
  ++agents;
}

void ConnectionCounts::State::Close(const std::string& address, bool agent) {
  std::lock_guard lock(mu);
  if (agent) {
    --agents;
    return;
  }
  auto it = per_address.find(address);
  if (it != per_address.end() && --it->second == 0) per_address.erase(it);
  --users;
}

uint32_t ConnectionCounts::max_connections() const {
  return state_->max_connections;
}

uint32_t ConnectionCounts::max_per_address() const {
  return state_->max_per_address;
}

uint32_t ConnectionCounts::users() const {
  std::lock_guard lock(state_->mu);
  return state_->users;
}

uint32_t ConnectionCounts::agents() const {
  std::lock_guard lock(state_->mu);
  return state_->agents;
}

}  // namespace ring
