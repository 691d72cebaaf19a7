#pragma once
// Where a webhook may post (docs/security.md "Webhooks"): its URL parsed
// strictly, master.yaml's webhooks.allowed_urls, and the addresses its host
// resolves to. A host that resolves to a loopback, private (RFC 1918, RFC
// 6598, ULA) or link-local address is refused unless the allow list names
// that address, so a webhook cannot probe the master's own network; the
// check runs when a webhook is created and again before every attempt,
// and the request goes to the address that was checked (DNS rebinding).
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ring {

struct WebhookUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower case; an IPv6 address without brackets
  std::string port;    // digits; 80 or 443 when the URL has none
  std::string target;  // path and query, starting with '/'
  bool host_is_address = false;
};

// Accepts http[s]://host[:port][/path][?query]: no user info, fragment,
// spaces or control characters, at most 2048 characters. The error says
// what is wrong with the text (callers name the field).
Result<WebhookUrl> ParseWebhookUrl(std::string_view text);

enum class AddressKind { kPublic, kLoopback, kPrivate, kLinkLocal, kSpecial };
// "a loopback address", ...
std::string_view Describe(AddressKind kind);
// The kind of an IPv4 or IPv6 address (IPv4-mapped and NAT64 addresses as
// their IPv4 address); nullopt when `text` is not an address.
std::optional<AddressKind> ClassifyAddress(std::string_view text);

class UrlAllowList {
 public:
  // Each entry: a URL prefix (http:// or https://), a host name, "*.domain",
  // "*", an address, or a range "address/bits". The error names the entry.
  static Result<UrlAllowList> Make(const std::vector<std::string>& entries);
  UrlAllowList() = default;

  bool AllowsUrl(const WebhookUrl& url) const;
  // Whether an entry names `address` for `url`: an address or range holding
  // it, or a URL prefix `url` matches whose host is that address.
  bool NamesAddress(std::string_view address, const WebhookUrl& url) const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry;
  static bool PrefixMatches(const Entry& e, const WebhookUrl& url);
  std::vector<std::shared_ptr<const Entry>> entries_;
};

// A host's addresses as text; kUnavailable naming it when it does not resolve.
using HostResolver =
    std::function<Result<std::vector<std::string>>(const std::string& host, const std::string& port)>;
// getaddrinfo (blocking: never on the lifecycle's or the network's threads).
Result<std::vector<std::string>> ResolveHost(const std::string& host, const std::string& port);

// The addresses `url` may be sent to: every address its host resolves to,
// each public or named by `allow`. kInvalidArgument when the URL is not on
// the allow list or an address is refused (saying which and why);
// kUnavailable when the host does not resolve.
Result<std::vector<std::string>> CheckWebhookTarget(const WebhookUrl& url, const UrlAllowList& allow,
                                                    const HostResolver& resolve);

}  // namespace ring
