#include "master/http/address_ranges.h"

#include <array>
#include <cstdint>

namespace ring {
namespace {

namespace ip = boost::asio::ip;

ip::address Unmapped(const ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) return ip::make_address_v4(ip::v4_mapped, a.to_v6());
  return a;
}

// The address's bytes with every bit past `prefix` cleared.
std::array<unsigned char, 16> Masked(const ip::address& a, unsigned prefix) {
  std::array<unsigned char, 16> bytes{};
  size_t n = 0;
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    for (unsigned char c : b) bytes[n++] = c;
  } else {
    const auto b = a.to_v6().to_bytes();
    for (unsigned char c : b) bytes[n++] = c;
  }
  for (size_t i = 0; i < n; ++i) {
    const unsigned first_bit = static_cast<unsigned>(i) * 8;
    if (prefix >= first_bit + 8) continue;
    const unsigned keep = prefix > first_bit ? prefix - first_bit : 0;
    bytes[i] &= static_cast<unsigned char>(0xff00u >> keep);
  }
  return bytes;
}

}  // namespace

Result<AddressRanges> AddressRanges::Parse(const std::vector<std::string>& entries) {
  AddressRanges out;
  for (const auto& entry : entries) {
    const auto slash = entry.find('/');
    boost::system::error_code ec;
    const ip::address base = Unmapped(ip::make_address(entry.substr(0, slash), ec));
    if (ec)
      return InvalidArgument("\"" + entry + "\" is not an IP address or a CIDR range (e.g. 10.1.0.0/16)");
    const unsigned bits = base.is_v4() ? 32 : 128;
    unsigned prefix = bits;
    if (slash != std::string::npos) {
      const std::string digits = entry.substr(slash + 1);
      if (digits.empty() || digits.size() > 3 ||
          digits.find_first_not_of("0123456789") != std::string::npos || std::stoul(digits) > bits)
        return InvalidArgument("\"" + entry + "\" has a prefix length that is not 0-" + std::to_string(bits));
      prefix = static_cast<unsigned>(std::stoul(digits));
    }
    out.ranges_.push_back({base, prefix});
  }
  return out;
}

bool AddressRanges::Contains(const std::string& address) const {
  if (ranges_.empty()) return false;
  boost::system::error_code ec;
  const ip::address a = Unmapped(ip::make_address(address, ec));
  if (ec) return false;
  for (const auto& r : ranges_)
    if (r.base.is_v4() == a.is_v4() && Masked(r.base, r.prefix) == Masked(a, r.prefix)) return true;
  return false;
}

}  // namespace ring
