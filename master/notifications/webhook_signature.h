#pragma once
// How a receiver knows a request came from this master (docs/security.md
// "Verifying a webhook's signature"): each request carries
// X-Ring-Timestamp (Unix seconds) and X-Ring-Signature, the hex
// HMAC-SHA256 of "<timestamp>.<body>" keyed with the webhook's secret.
#include <cstdint>
#include <string>
#include <string_view>

namespace ring {

inline constexpr const char* kSignatureHeader = "X-Ring-Signature";
inline constexpr const char* kTimestampHeader = "X-Ring-Timestamp";

// Lower-case hex HMAC-SHA256 of "<timestamp>.<body>" with `secret` as the key.
std::string WebhookSignature(std::string_view secret, int64_t timestamp, std::string_view body);
// A new signing secret: 32 random bytes as 64 hex digits.
std::string NewWebhookSecret();
// A random event id in the form of a UUID (version 4).
std::string NewEventId();

}  // namespace ring
