#pragma once
// Who holds the master's connections. Users' connections (everything that
// is not an agent's channel) are capped in all (max_connections) and per
// client address (max_connections_per_address), so one address cannot take
// them all (connections from the addresses an operator exempts,
// connection_cap_exempt_addresses, count only in all); a connection counts
// as a user's from accept until its first
// request shows it is an agent's WebSocket, which is then counted apart and
// never refused for lack of room. Thread-safe: connections open on the
// acceptor's strand and close on their own. The counts are shared with the
// tickets, so a ticket may outlive the ConnectionCounts that issued it (the
// io_context destroys the frames of connections still open at shutdown
// after the server is gone).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "master/http/address_ranges.h"

namespace ring {

enum class ConnectionRefusal {
  kNone,
  kTotal,       // max_connections user connections are open
  kPerAddress,  // max_connections_per_address are open from this address
};

class ConnectionCounts {
  struct State;

 public:
  // `exempt_from_per_address`: addresses whose connections count only
  // against max_connections.
  ConnectionCounts(uint32_t max_connections, uint32_t max_per_address,
                   AddressRanges exempt_from_per_address = {});

  // One connection of a client; closes it when destroyed.
  class Ticket {
   public:
    Ticket(std::shared_ptr<State> counts, std::string address, ConnectionRefusal refusal)
        : counts_(std::move(counts)), address_(std::move(address)), refusal_(refusal) {}
    Ticket(Ticket&& other) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();

    // Whether it was over a limit when accepted (a user's connection is then
    // answered 503; an agent's is let in).
    ConnectionRefusal refusal() const { return refusal_; }
    const std::string& address() const { return address_; }
    // Its request is an agent's WebSocket: it stops counting against users.
    void BecomeAgent();

   private:
    std::shared_ptr<State> counts_;  // null once moved from
    std::string address_;
    ConnectionRefusal refusal_;
    bool agent_ = false;
  };

  // Counts a new connection from `address`.
  Ticket Open(const std::string& address);

  uint32_t max_connections() const;
  uint32_t max_per_address() const;
  uint32_t users() const;
  uint32_t agents() const;

 private:
  struct State {
    State(uint32_t max_connections, uint32_t max_per_address, AddressRanges exempt)
        : max_connections(max_connections), max_per_address(max_per_address), exempt(std::move(exempt)) {}
    void Close(const std::string& address, bool agent);
    void MoveToAgents(const std::string& address);

    const uint32_t max_connections;
    const uint32_t max_per_address;
    const AddressRanges exempt;  // not counted per address
    mutable std::mutex mu;
    uint32_t users = 0;
    uint32_t agents = 0;
    std::map<std::string, uint32_t> per_address;  // users' connections, exempt ones not; no entry at 0
  };
  std::shared_ptr<State> state_;
};

}  // namespace ring
