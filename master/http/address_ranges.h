#pragma once
// Client addresses an operator lists in master.yaml (single addresses or
// CIDR ranges, IPv4 or IPv6), e.g. connection_cap_exempt_addresses: the
// addresses of a cluster's agents, whose connections do not count against
// max_connections_per_address. Immutable once parsed; read from any thread.
#include <string>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "common/status.h"

namespace ring {

class AddressRanges {
 public:
  AddressRanges() = default;
  // "10.1.2.3", "10.1.0.0/16", "fd00::/8"; an error names the entry.
  static Result<AddressRanges> Parse(const std::vector<std::string>& entries);

  bool empty() const { return ranges_.empty(); }
  // Whether `address` (as the acceptor prints it; an IPv4-mapped IPv6
  // address counts as its IPv4 one) is in one of the ranges.
  bool Contains(const std::string& address) const;

 private:
  struct Range {
    boost::asio::ip::address base;  // its bits beyond the prefix are cleared
    unsigned prefix = 0;            // bits that must match
  };
  std::vector<Range> ranges_;
};

}  // namespace ring
