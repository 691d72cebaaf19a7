// Where a webhook may post: URLs parsed strictly, the allow list's entries,
// and addresses refused unless the allow list names them (also when a name
// resolves to one: the resolver here is a fake, as DNS would be at
// delivery time after a rebinding).
#include <gtest/gtest.h>

#include "master/notifications/webhook_url.h"

namespace ring {
namespace {

WebhookUrl Url(const std::string& text) {
  auto url = ParseWebhookUrl(text);
  EXPECT_TRUE(url.ok()) << text << ": " << url.status().message();
  return url.ok() ? *url : WebhookUrl{};
}

UrlAllowList Allow(const std::vector<std::string>& entries) {
  auto list = UrlAllowList::Make(entries);
  EXPECT_TRUE(list.ok()) << list.status().message();
  return list.ok() ? *list : UrlAllowList{};
}

HostResolver Resolves(std::vector<std::string> addresses) {
  return [addresses](const std::string&, const std::string&) -> Result<std::vector<std::string>> {
    return addresses;
  };
}

TEST(WebhookUrl, ParsesHostPortAndTarget) {
  auto u = Url("HTTPS://Hooks.Example.com/services/T1?x=1");
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "hooks.example.com");
  EXPECT_EQ(u.port, "443");
  EXPECT_EQ(u.target, "/services/T1?x=1");
  EXPECT_FALSE(u.host_is_address);
  auto v6 = Url("http://[::1]:8080");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, "8080");
  EXPECT_EQ(v6.target, "/");
  EXPECT_TRUE(v6.host_is_address);
}

TEST(WebhookUrl, RefusesWhatCouldHideTheRealHost) {
  for (const char* bad :
       {"ftp://example.com/", "example.com/hook", "http://user@10.0.0.1/", "http://a b.com/",
        "http://example.com/#frag", "http://example.com:0/", "http://example.com:70000/", "http://[::1/",
        "http://exa\\mple.com/", "http:///path", "http://ex%61mple.com/"})
    EXPECT_FALSE(ParseWebhookUrl(bad).ok()) << bad;
}

TEST(WebhookUrl, ClassifiesAddresses) {
  EXPECT_EQ(ClassifyAddress("8.8.8.8"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("127.0.0.1"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("127.3.2.1"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("::1"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("10.1.2.3"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("172.16.0.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("172.32.0.1"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("192.168.1.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("100.64.0.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("169.254.169.254"), AddressKind::kLinkLocal);
  EXPECT_EQ(ClassifyAddress("fd00::1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("fe80::1"), AddressKind::kLinkLocal);
  EXPECT_EQ(ClassifyAddress("::ffff:127.0.0.1"), AddressKind::kLoopback);
  EXPECT_EQ(ClassifyAddress("::ffff:10.0.0.1"), AddressKind::kPrivate);
  EXPECT_EQ(ClassifyAddress("0.0.0.0"), AddressKind::kSpecial);
  EXPECT_EQ(ClassifyAddress("::"), AddressKind::kSpecial);
  EXPECT_EQ(ClassifyAddress("224.0.0.1"), AddressKind::kSpecial);
  EXPECT_EQ(ClassifyAddress("2606:4700::1111"), AddressKind::kPublic);
  EXPECT_EQ(ClassifyAddress("example.com"), std::nullopt);
}

TEST(UrlAllowList, PrefixesMatchSchemeHostPortAndPathAtASegment) {
  auto allow = Allow({"https://hooks.slack.com/services/", "http://ci.example.com:8080/hook"});
  EXPECT_TRUE(allow.AllowsUrl(Url("https://hooks.slack.com/services/T0/B0/x")));
  EXPECT_FALSE(allow.AllowsUrl(Url("http://hooks.slack.com/services/T0"))) << "another scheme";
  EXPECT_FALSE(allow.AllowsUrl(Url("https://hooks.slack.com.evil.net/services/T0")));
  EXPECT_FALSE(allow.AllowsUrl(Url("https://hooks.slack.com/other")));
  EXPECT_TRUE(allow.AllowsUrl(Url("http://ci.example.com:8080/hook")));
  EXPECT_TRUE(allow.AllowsUrl(Url("http://ci.example.com:8080/hook/2?x")));
  EXPECT_FALSE(allow.AllowsUrl(Url("http://ci.example.com:8080/hooked")));
  EXPECT_FALSE(allow.AllowsUrl(Url("http://ci.example.com:9090/hook"))) << "another port";
}

TEST(UrlAllowList, HostsWildcardsAndRanges) {
  auto allow = Allow({"hooks.example.com", "*.corp.example", "10.20.0.0/16", "fd00::/8"});
  EXPECT_TRUE(allow.AllowsUrl(Url("https://hooks.example.com/a")));
  EXPECT_TRUE(allow.AllowsUrl(Url("http://hooks.example.com:9000/a")));
  EXPECT_FALSE(allow.AllowsUrl(Url("https://evil-hooks.example.com/a")));
  EXPECT_TRUE(allow.AllowsUrl(Url("https://ci.corp.example/a")));
  EXPECT_FALSE(allow.AllowsUrl(Url("https://corp.example/a"))) << "*. is for names below the domain";
  EXPECT_TRUE(allow.AllowsUrl(Url("http://10.20.3.4/a")));
  EXPECT_FALSE(allow.AllowsUrl(Url("http://10.21.3.4/a")));
  const auto any = Url("http://hooks.example.com/");
  EXPECT_TRUE(allow.NamesAddress("10.20.255.1", any));
  EXPECT_TRUE(allow.NamesAddress("fd12::7", any));
  EXPECT_FALSE(allow.NamesAddress("10.21.0.1", any));
  EXPECT_FALSE(allow.NamesAddress("127.0.0.1", any));
}

TEST(UrlAllowList, RefusesBadEntriesNamingThem) {
  for (const char* bad : {"ftp://x/", "10.0.0.0/33", "*.", "not a host", "10.0.0.300/8", "http://"}) {
    auto list = UrlAllowList::Make({bad});
    ASSERT_FALSE(list.ok()) << bad;
    EXPECT_NE(list.status().message().find(bad), std::string::npos) << list.status().message();
  }
}

TEST(CheckWebhookTarget, PublicAddressesPassAndNotListedUrlsDoNot) {
  auto allow = Allow({"*"});
  auto ok = CheckWebhookTarget(Url("https://hooks.example.com/x"), allow, Resolves({"93.184.216.34"}));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, std::vector<std::string>{"93.184.216.34"});
  auto narrow = Allow({"https://hooks.example.com/"});
  auto refused = CheckWebhookTarget(Url("https://other.example.com/x"), narrow, Resolves({"93.184.216.34"}));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("webhooks.allowed_urls"), std::string::npos);
}

TEST(CheckWebhookTarget, LoopbackAndPrivateAddressesNeedTheListToNameThem) {
  auto any = Allow({"*"});
  for (const char* address : {"127.0.0.1", "10.1.2.3", "192.168.0.9", "169.254.169.254", "::1", "fd00::5"}) {
    auto r = CheckWebhookTarget(Url("http://internal.example/x"), any, Resolves({address}));
    ASSERT_FALSE(r.ok()) << address;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(address), std::string::npos) << r.status().message();
  }
  // One bad address among good ones refuses the URL: the request could go to either.
  EXPECT_FALSE(
      CheckWebhookTarget(Url("http://internal.example/x"), any, Resolves({"93.184.216.34", "10.0.0.1"}))
          .ok());
  // Named by address, range or prefix, it passes.
  auto named = Allow({"http://127.0.0.1:9000/", "internal.example", "10.0.0.0/8"});
  EXPECT_TRUE(CheckWebhookTarget(Url("http://127.0.0.1:9000/hook"), named, ResolveHost).ok());
  EXPECT_FALSE(CheckWebhookTarget(Url("http://127.0.0.1:9001/hook"), named, ResolveHost).ok())
      << "not listed";
  EXPECT_TRUE(CheckWebhookTarget(Url("http://internal.example/x"), named, Resolves({"10.4.4.4"})).ok());
  // A listed name that now resolves to an address nobody named (DNS rebinding).
  auto rebound = CheckWebhookTarget(Url("http://internal.example/x"), named, Resolves({"192.168.1.1"}));
  ASSERT_FALSE(rebound.ok());
  EXPECT_NE(rebound.status().message().find("a private address"), std::string::npos)
      << rebound.status().message();
  auto loopback = CheckWebhookTarget(Url("http://internal.example/x"), named, Resolves({"127.0.0.1"}));
  ASSERT_FALSE(loopback.ok()) << "127.0.0.1 is named for its prefix's URLs only";
  EXPECT_NE(loopback.status().message().find("loopback"), std::string::npos) << loopback.status().message();
}

TEST(CheckWebhookTarget, AddressesWrittenOddlyAreResolvedAndRefused) {
  auto any = Allow({"*"});
  // getaddrinfo reads these as 127.0.0.1; the check sees what it resolved.
  for (const char* url : {"http://127.1/x", "http://2130706433/x", "http://localhost/x"}) {
    auto r = CheckWebhookTarget(Url(url), any, ResolveHost);
    EXPECT_FALSE(r.ok()) << url;
  }
}

}  // namespace
}  // namespace ring
