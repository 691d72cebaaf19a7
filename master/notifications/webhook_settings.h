#pragma once
// master.yaml `webhooks:` (docs/operations.md "Webhooks"): which URLs
// webhooks may post to, and how hard the master tries each delivery.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ring {

struct WebhookSettings {
  // URL prefixes ("https://hooks.slack.com/services/"), host names
  // ("hooks.example.com", "*.example.com", "*"), addresses and ranges
  // ("10.20.0.7", "10.20.0.0/16"). Empty: no webhook can be created.
  // Loopback, private and link-local addresses are refused unless an entry
  // names the address (an address, a range, or a prefix whose host is one).
  std::vector<std::string> allowed_urls;
  std::chrono::milliseconds timeout{10000};     // each attempt: connect, send, answer
  int64_t retries = 3;                          // attempts after the first before FAILED
  std::chrono::milliseconds retry_delay{1000};  // before the first retry; doubled each time, at most 60 s
  int64_t max_queued = 10000;                   // deliveries waiting in memory; more are FAILED at once
  int workers = 2;                              // threads sending deliveries
};

}  // namespace ring
