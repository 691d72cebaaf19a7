// Announced services last as long as their allocation; activity and
// per-user connection limits.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "master/proxy/proxy_activity.h"
#include "master/proxy/service_registry.h"
#include "master/proxy/user_connection_limits.h"

namespace ring {
namespace {

TEST(ServiceRegistry, AnAnnouncementLastsAsLongAsItsAllocation) {
  std::set<std::string> live = {"1.0", "2.0"};
  ServiceRegistry registry([&](const std::string& id) { return live.contains(id); });
  registry.Announce({1, "1.0", "ada", "10.0.0.5", 8888, "jupyter"});
  registry.Announce({2, "2.0", "bob", "10.0.0.6", 6006, ""});
  auto found = registry.Lookup(1);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->owner, "ada");
  EXPECT_EQ(found->host, "10.0.0.5");
  EXPECT_EQ(found->port, 8888);
  EXPECT_FALSE(registry.Lookup(3));

  live.erase("1.0");  // the allocation ended
  EXPECT_FALSE(registry.Lookup(1));
  EXPECT_EQ(registry.size(), 1u);

  // A new attempt of the task announces again and replaces the old one.
  live.insert("1.1");
  registry.Announce({1, "1.1", "ada", "10.0.0.7", 9999, "jupyter"});
  EXPECT_EQ(registry.Lookup(1)->port, 9999);
  registry.Forget("1.1");
  EXPECT_FALSE(registry.Lookup(1));
  EXPECT_TRUE(registry.Lookup(2));
}

TEST(ServiceRegistry, AnnouncingSweepsEndedAllocations) {
  std::set<std::string> live = {"1.0", "2.0"};
  ServiceRegistry registry([&](const std::string& id) { return live.contains(id); });
  registry.Announce({1, "1.0", "ada", "h", 1, ""});
  live.erase("1.0");
  registry.Announce({2, "2.0", "ada", "h", 2, ""});
  EXPECT_EQ(registry.size(), 1u);
}

TEST(ProxyActivity, KeepsTheLatestTimeOfEachTaskAcrossThreads) {
  ProxyActivity activity;
  using Clock = ProxyActivity::Clock;
  const auto t0 = Clock::time_point{} + std::chrono::hours(1);
  EXPECT_FALSE(activity.Last(1));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) activity.Touch(1 + i % 2, t0 + std::chrono::seconds(t * 1000 + i));
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(*activity.Last(1), t0 + std::chrono::seconds(3998));
  EXPECT_EQ(*activity.Last(2), t0 + std::chrono::seconds(3999));
  activity.Touch(1, t0);  // an older time does not move it back
  EXPECT_EQ(*activity.Last(1), t0 + std::chrono::seconds(3998));
  activity.Forget(1);
  EXPECT_FALSE(activity.Last(1));
}

TEST(UserConnectionLimits, EachUserHasTheirOwnBound) {
  UserConnectionLimits limits(2);
  auto a1 = limits.Take("ada");
  auto a2 = limits.Take("ada");
  ASSERT_TRUE(a1 && a2);
  EXPECT_FALSE(limits.Take("ada"));
  EXPECT_TRUE(limits.Take("bob"));  // given back at once
  EXPECT_EQ(limits.open("bob"), 0u);
  a1.reset();
  EXPECT_EQ(limits.open("ada"), 1u);
  auto a3 = limits.Take("ada");
  EXPECT_TRUE(a3);
  auto moved = std::move(*a3);
  a3.reset();  // a moved-from slot gives nothing back
  EXPECT_EQ(limits.open("ada"), 2u);
}

}  // namespace
}  // namespace ring
