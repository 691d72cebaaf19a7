// X-Ring-Signature: hex HMAC-SHA256 of "<timestamp>.<body>" with the
// webhook's secret, checked against vectors computed with
// `printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret`;
// secrets and event ids are fresh each time.
#include <gtest/gtest.h>

#include <set>

#include "master/notifications/webhook_signature.h"

namespace ring {
namespace {

TEST(WebhookSignature, IsHexHmacSha256OfTimestampDotBody) {
  const std::string body = R"({"a":1})";
  EXPECT_EQ(WebhookSignature("secret", 1700000000, body),
            "49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686");
  EXPECT_EQ(WebhookSignature("other", 1700000000, body),
            "2cb38bd50b3aa61b12df512da616c9577f2a99edb9467110d361a655e1ad3bd5");
  EXPECT_NE(WebhookSignature("secret", 1700000001, body), WebhookSignature("secret", 1700000000, body))
      << "the timestamp is signed";
  EXPECT_NE(WebhookSignature("secret", 1700000000, R"({"a":2})"),
            WebhookSignature("secret", 1700000000, body));
}

TEST(WebhookSignature, SecretsAndEventIdsAreFreshAndWellFormed) {
  std::set<std::string> secrets, ids;
  for (int i = 0; i < 50; ++i) {
    const std::string s = NewWebhookSecret();
    ASSERT_EQ(s.size(), 64u);
    EXPECT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
    secrets.insert(s);
    const std::string id = NewEventId();
    ASSERT_EQ(id.size(), 36u) << id;
    EXPECT_EQ(id[14], '4') << id;
    EXPECT_TRUE(id[19] == '8' || id[19] == '9' || id[19] == 'a' || id[19] == 'b') << id;
    ids.insert(id);
  }
  EXPECT_EQ(secrets.size(), 50u);
  EXPECT_EQ(ids.size(), 50u);
}

}  // namespace
}  // namespace ring
