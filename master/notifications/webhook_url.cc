#include "master/notifications/webhook_url.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <memory>

namespace ring {
namespace {

using Address = std::array<unsigned char, 16>;  // IPv4 as ::ffff:a.b.c.d

std::optional<Address> ParseAddress(std::string_view text) {
  const std::string s(text);
  Address a{};
  in_addr v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    a[10] = a[11] = 0xff;
    std::memcpy(&a[12], &v4, 4);
    return a;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    std::memcpy(a.data(), &v6, 16);
    return a;
  }
  return std::nullopt;
}

bool InRange(const Address& a, const Address& network, int bits) {
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const unsigned mask = bits >= 8 ? 0xffu : (0xffu << (8 - bits)) & 0xffu;
    if ((a[i] & mask) != (network[i] & mask)) return false;
  }
  return true;
}

AddressKind ClassifyV4(const unsigned char* b) {
  if (b[0] == 0) return AddressKind::kSpecial;  // "this network"
  if (b[0] == 127) return AddressKind::kLoopback;
  if (b[0] == 10 || (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168))
    return AddressKind::kPrivate;                                        // RFC 1918
  if (b[0] == 100 && (b[1] & 0xc0) == 64) return AddressKind::kPrivate;  // RFC 6598 shared space
  if (b[0] == 169 && b[1] == 254) return AddressKind::kLinkLocal;        // cloud metadata lives here
  if ((b[0] == 192 && b[1] == 0 && b[2] == 0) || (b[0] == 198 && (b[1] & 0xfe) == 18) || b[0] >= 224)
    return AddressKind::kSpecial;  // protocol assignments, benchmarking, multicast, reserved
  return AddressKind::kPublic;
}

AddressKind Classify(const Address& a) {
  static const Address kMapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const Address kNat64{0, 0x64, 0xff, 0x9b};
  if (InRange(a, kMapped, 96) || InRange(a, kNat64, 96)) return ClassifyV4(&a[12]);
  if (a[0] == 0x20 && a[1] == 0x02) {  // 6to4 carries an IPv4 address
    const AddressKind inner = ClassifyV4(&a[2]);
    if (inner != AddressKind::kPublic) return inner;
  }
  static const Address kZero{};
  if (InRange(a, kZero, 127)) return a[15] == 1 ? AddressKind::kLoopback : AddressKind::kSpecial;  // ::1, ::
  if (InRange(a, kZero, 96)) return AddressKind::kSpecial;  // IPv4-compatible, deprecated
  if ((a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0))
    return AddressKind::kPrivate;  // ULA, site-local
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return AddressKind::kLinkLocal;
  if (a[0] == 0xff || (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8))
    return AddressKind::kSpecial;  // multicast, documentation
  return AddressKind::kPublic;
}

bool IsHostName(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool SameHost(const WebhookUrl& a, const WebhookUrl& b) {
  if (a.host_is_address && b.host_is_address) return ParseAddress(a.host) == ParseAddress(b.host);
  return a.host == b.host;
}

}  // namespace

Result<WebhookUrl> ParseWebhookUrl(std::string_view text) {
  if (text.empty()) return InvalidArgument("is empty");
  if (text.size() > 2048) return InvalidArgument("is longer than 2048 characters");
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f)
      return InvalidArgument("has a space, a control or a non-ASCII character (percent-encode it)");
  }
  if (text.find('#') != std::string_view::npos) return InvalidArgument("must not have a fragment (#)");
  WebhookUrl url;
  const auto sep = text.find("://");
  if (sep == std::string_view::npos) return InvalidArgument("must start with http:// or https://");
  url.scheme = Lower(text.substr(0, sep));
  if (url.scheme != "http" && url.scheme != "https")
    return InvalidArgument("must start with http:// or https://, not " + url.scheme + "://");
  std::string_view rest = text.substr(sep + 3);
  const auto end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end);
  const std::string_view target = end == std::string_view::npos ? "" : rest.substr(end);
  if (authority.find('@') != std::string_view::npos || authority.find('\\') != std::string_view::npos)
    return InvalidArgument("must not have user information (@) before its host");
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgument("has a [ without its ]");
    url.host = Lower(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return InvalidArgument("has text after its ]");
    if (!after.empty()) port = after.substr(1);
    if (!ParseAddress(url.host) || url.host.find(':') == std::string::npos)
      return InvalidArgument("has an IPv6 address in [ ] that is not one");
  } else {
    const auto colon = authority.find(':');
    url.host = Lower(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    if (!url.host.empty() && url.host.back() == '.') url.host.pop_back();
    if (!IsHostName(url.host)) return InvalidArgument("has no host, or a host that is not a name or address");
  }
  url.host_is_address = ParseAddress(url.host).has_value();
  if (port.empty()) {
    url.port = url.scheme == "https" ? "443" : "80";
  } else {
    if (port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(std::string(port)) < 1 || std::stoi(std::string(port)) > 65535)
      return InvalidArgument("has a port that is not from 1 to 65535");
    url.port = std::to_string(std::stoi(std::string(port)));
  }
  url.target =
      target.empty() ? "/" : (target.front() == '?' ? "/" + std::string(target) : std::string(target));
  return url;
}

std::string_view Describe(AddressKind kind) {
  switch (kind) {
    case AddressKind::kPublic:
      return "a public address";
    case AddressKind::kLoopback:
      return "a loopback address";
    case AddressKind::kPrivate:
      return "a private address";
    case AddressKind::kLinkLocal:
      return "a link-local address";
    case AddressKind::kSpecial:
      return "a special-purpose address";
  }
  return "an address";
}

std::optional<AddressKind> ClassifyAddress(std::string_view text) {
  auto a = ParseAddress(text);
  if (!a) return std::nullopt;
  return Classify(*a);
}

struct UrlAllowList::Entry {
  enum class Kind { kPrefix, kHost, kSubdomains, kAnyHost, kRange };
  Kind kind = Kind::kHost;
  WebhookUrl prefix;  // kPrefix
  std::string host;   // kHost; kSubdomains: the domain
  Address network{};  // kRange, and a kPrefix whose host is an address
  int bits = 0;
  bool names_address = false;
};

Result<UrlAllowList> UrlAllowList::Make(const std::vector<std::string>& entries) {
  UrlAllowList list;
  for (const std::string& text : entries) {
    auto bad = [&](const std::string& why) {
      return InvalidArgument("webhooks.allowed_urls entry \"" + text + "\" " + why);
    };
    auto e = std::make_shared<Entry>();
    const std::string lower = Lower(text);
    if (lower.find("://") != std::string::npos) {
      auto url = ParseWebhookUrl(text);
      if (!url.ok()) return bad(url.status().message());
      e->kind = Entry::Kind::kPrefix;
      e->prefix = *url;
      if (url->host_is_address) {
        e->names_address = true;
        e->network = *ParseAddress(url->host);
        e->bits = 128;
      }
    } else if (lower == "*") {
      e->kind = Entry::Kind::kAnyHost;
    } else if (lower.starts_with("*.")) {
      e->kind = Entry::Kind::kSubdomains;
      e->host = lower.substr(2);
      if (!IsHostName(e->host) || ParseAddress(e->host)) return bad("must be *. followed by a domain name");
    } else if (auto slash = lower.find('/'); slash != std::string::npos || ParseAddress(lower)) {
      const auto a = ParseAddress(lower.substr(0, slash));
      if (!a) return bad("must be an address or a range address/bits");
      const bool v4 = lower.find(':') == std::string::npos;
      int bits = v4 ? 32 : 128;
      if (slash != std::string::npos) {
        const std::string b = lower.substr(slash + 1);
        if (b.empty() || b.size() > 3 || !std::all_of(b.begin(), b.end(), ::isdigit) || std::stoi(b) > bits)
          return bad("has a prefix length that is not from 0 to " + std::to_string(bits));
        bits = std::stoi(b);
      }
      e->kind = Entry::Kind::kRange;
      e->network = *a;
      e->bits = v4 ? bits + 96 : bits;
      e->names_address = true;
    } else {
      e->kind = Entry::Kind::kHost;
      e->host = lower;
      if (!e->host.empty() && e->host.back() == '.') e->host.pop_back();
      if (!IsHostName(e->host)) return bad("is not a URL prefix, host name, *.domain, *, address or range");
    }
    list.entries_.push_back(std::move(e));
  }
  return list;
}

bool UrlAllowList::PrefixMatches(const Entry& e, const WebhookUrl& url) {
  const WebhookUrl& p = e.prefix;
  if (p.scheme != url.scheme || p.port != url.port || !SameHost(p, url)) return false;
  const std::string& want = p.target;
  return want == "/" || url.target == want ||
         (url.target.starts_with(want) &&
          (want.back() == '/' || url.target[want.size()] == '/' || url.target[want.size()] == '?'));
}

bool UrlAllowList::AllowsUrl(const WebhookUrl& url) const {
  for (const auto& e : entries_) {
    switch (e->kind) {
      case Entry::Kind::kPrefix:
        if (PrefixMatches(*e, url)) return true;
        break;
      case Entry::Kind::kHost:
        if (!url.host_is_address && url.host == e->host) return true;
        break;
      case Entry::Kind::kSubdomains:
        if (!url.host_is_address && url.host.ends_with("." + e->host)) return true;
        break;
      case Entry::Kind::kAnyHost:
        return true;
      case Entry::Kind::kRange:
        if (auto a = ParseAddress(url.host); a && InRange(*a, e->network, e->bits)) return true;
        break;
    }
  }
  return false;
}

bool UrlAllowList::NamesAddress(std::string_view address, const WebhookUrl& url) const {
  const auto a = ParseAddress(address);
  if (!a) return false;
  for (const auto& e : entries_)
    if (e->names_address && InRange(*a, e->network, e->bits) &&
        (e->kind == Entry::Kind::kRange || PrefixMatches(*e, url)))
      return true;
  return false;
}

Result<std::vector<std::string>> ResolveHost(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return Status(ErrorCode::kUnavailable, "cannot resolve " + host + ": " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  std::vector<std::string> out;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* where =
        ai->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr);
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    if (inet_ntop(ai->ai_family, where, text, sizeof text) == nullptr) continue;
    if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
  }
  if (out.empty()) return Status(ErrorCode::kUnavailable, "cannot resolve " + host + ": no addresses");
  return out;
}

Result<std::vector<std::string>> CheckWebhookTarget(const WebhookUrl& url, const UrlAllowList& allow,
                                                    const HostResolver& resolve) {
  const std::string where = url.scheme + "://" +
                            (url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host) +
                            ":" + url.port + url.target;
  if (!allow.AllowsUrl(url)) return InvalidArgument(where + " is not on master.yaml's webhooks.allowed_urls");
  auto addresses = resolve(url.host, url.port);
  if (!addresses.ok()) return addresses.status();
  if (addresses->empty()) return Status(ErrorCode::kUnavailable, "cannot resolve " + url.host);
  for (const std::string& a : *addresses) {
    const auto kind = ClassifyAddress(a);
    if (!kind) return InvalidArgument(url.host + " resolves to \"" + a + "\", which is not an address");
    if (*kind != AddressKind::kPublic && !allow.NamesAddress(a, url))
      return InvalidArgument(url.host + " resolves to " + a + ", " + std::string(Describe(*kind)) +
                             ", which master.yaml's webhooks.allowed_urls does not name (list the address or "
                             "its range to allow it)");
  }
  return addresses;
}

}  // namespace ring
