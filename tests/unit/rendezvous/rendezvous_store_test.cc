// The rendezvous key-value store on its own: set, get, waiters woken by a set
// or by the allocation's end, key rules, limits, and one store per allocation.
#include "master/rendezvous/rendezvous_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <thread>

namespace ring {
namespace {

TEST(RendezvousStore, SetGetAndReplace) {
  RendezvousStore store;
  store.Open("1.0");
  ASSERT_TRUE(store.Set("1.0", "rank/0/addr", "10.0.0.1:4000").ok());
  auto got = store.Get("1.0", "rank/0/addr");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->value);
  EXPECT_EQ(*got->value, "10.0.0.1:4000");
  ASSERT_TRUE(store.Set("1.0", "rank/0/addr", std::string("\0\xff raw", 6)).ok());
  EXPECT_EQ(*store.Get("1.0", "rank/0/addr")->value, std::string("\0\xff raw", 6));
  EXPECT_EQ(store.KeyCount("1.0"), 1u);
  // An empty value is a value.
  ASSERT_TRUE(store.Set("1.0", "empty", "").ok());
  ASSERT_TRUE(store.Get("1.0", "empty")->value);
  EXPECT_EQ(*store.Get("1.0", "empty")->value, "");
}

TEST(RendezvousStore, MissingKeyWithoutWaiterIsNoValueAndNoWait) {
  RendezvousStore store;
  store.Open("1.0");
  auto got = store.Get("1.0", "nccl/unique_id");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->value);
  EXPECT_EQ(got->wait, 0u);
  EXPECT_EQ(store.WaiterCount("1.0"), 0u);
}

TEST(RendezvousStore, WaiterIsWokenOnceWhenItsKeyIsSet) {
  RendezvousStore store;
  store.Open("1.0");
  int woken_a = 0;
  int woken_b = 0;
  auto a = store.Get("1.0", "a", [&] { ++woken_a; });
  auto b = store.Get("1.0", "b", [&] { ++woken_b; });
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->wait, 0u);
  EXPECT_NE(a->wait, b->wait);
  EXPECT_EQ(store.WaiterCount("1.0"), 2u);
  ASSERT_TRUE(store.Set("1.0", "a", "1").ok());
  EXPECT_EQ(woken_a, 1);
  EXPECT_EQ(woken_b, 0);  // another key's waiter sleeps on
  ASSERT_TRUE(store.Set("1.0", "a", "2").ok());
  EXPECT_EQ(woken_a, 1);  // woken once
  EXPECT_EQ(store.WaiterCount("1.0"), 1u);
  // A set key is answered at once: nothing is registered.
  auto again = store.Get("1.0", "a", [&] { ++woken_a; });
  ASSERT_TRUE(again->value);
  EXPECT_EQ(again->wait, 0u);
  EXPECT_EQ(store.WaiterCount("1.0"), 1u);
}

TEST(RendezvousStore, CancelledWaiterIsNotWoken) {
  RendezvousStore store;
  store.Open("1.0");
  int woken = 0;
  auto w = store.Get("1.0", "k", [&] { ++woken; });
  store.CancelWait("1.0", w->wait);
  store.CancelWait("1.0", w->wait);  // twice is harmless
  EXPECT_EQ(store.WaiterCount("1.0"), 0u);
  ASSERT_TRUE(store.Set("1.0", "k", "v").ok());
  EXPECT_EQ(woken, 0);
}

TEST(RendezvousStore, WakeRunsWithoutTheLockHeld) {
  RendezvousStore store;
  store.Open("1.0");
  bool read_inside = false;
  auto w = store.Get("1.0", "k", [&] { read_inside = store.Get("1.0", "k")->value != nullptr; });
  ASSERT_TRUE(store.Set("1.0", "k", "v").ok());
  EXPECT_TRUE(read_inside);  // would deadlock if the store's mutex were held
}

TEST(RendezvousStore, WaiterOnAnotherThreadSeesTheValue) {
  RendezvousStore store;
  store.Open("1.0");
  std::mutex mu;
  std::condition_variable cv;
  bool woken = false;
  std::string seen;
  std::thread reader([&] {
    auto w = store.Get("1.0", "peer", [&] {
      std::lock_guard lock(mu);
      woken = true;
      cv.notify_all();
    });
    if (!w->value) {
      std::unique_lock lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return woken; }));
    }
    seen = *store.Get("1.0", "peer")->value;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(store.Set("1.0", "peer", "hello").ok());
  reader.join();
  EXPECT_EQ(seen, "hello");
}

TEST(RendezvousStore, InvalidKeysAre400NamingTheKey) {
  RendezvousStore store;
  store.Open("1.0");
  for (const std::string& key : {std::string(), std::string("has space"), std::string("semi;colon"),
                                 std::string("ünï"), std::string(257, 'k'), std::string("a?b")}) {
    Status s = store.Set("1.0", key, "v");
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << key;
    EXPECT_NE(s.message().find("rendezvous key \""), std::string::npos) << s.message();
    EXPECT_EQ(store.Get("1.0", key).status().code(), ErrorCode::kInvalidArgument);
  }
  Status s = store.Set("1.0", "bad key", "v");
  EXPECT_NE(s.message().find("\"bad key\""), std::string::npos) << s.message();
  for (const std::string& key : {std::string("a"), std::string(256, 'k'), std::string("A-z_0.9:/x")})
    EXPECT_TRUE(store.Set("1.0", key, "v").ok()) << key;
  EXPECT_EQ(store.CheckKeys("1.0", {"a", "no good"}).status().code(), ErrorCode::kInvalidArgument);
}

TEST(RendezvousStore, ValueOverItsLimitIs413AndStoresNothing) {
  RendezvousStore store;
  store.Open("1.0");
  EXPECT_TRUE(store.Set("1.0", "max", std::string(4u << 20, 'x')).ok());
  Status s = store.Set("1.0", "big", std::string((4u << 20) + 1, 'x'));
  EXPECT_EQ(s.code(), ErrorCode::kTooLarge);
  EXPECT_NE(s.message().find("4194304 bytes per value"), std::string::npos) << s.message();
  EXPECT_FALSE(store.Get("1.0", "big")->value);
}

TEST(RendezvousStore, KeyCountLimitIs400NamingIt) {
  RendezvousLimits limits;
  limits.max_keys = 3;
  RendezvousStore store(limits);
  store.Open("1.0");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store.Set("1.0", "k" + std::to_string(i), "v").ok());
  Status s = store.Set("1.0", "k3", "v");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("3 rendezvous keys, the limit of keys per allocation"), std::string::npos)
      << s.message();
  EXPECT_TRUE(store.Set("1.0", "k1", "replaced").ok());  // replacing adds no key
  store.Open("2.0");
  EXPECT_TRUE(store.Set("2.0", "k3", "v").ok());  // the limit is per allocation
}

TEST(RendezvousStore, DefaultLimitsAreTheContractsOnes) {
  RendezvousLimits limits;
  EXPECT_EQ(limits.max_key_bytes, 256u);
  EXPECT_EQ(limits.max_value_bytes, 4u << 20);
  EXPECT_EQ(limits.max_keys, 10000u);
  EXPECT_EQ(limits.max_total_bytes, 64u << 20);
}

TEST(RendezvousStore, TotalBytesLimitIs413AndCountsReplacements) {
  RendezvousLimits limits;
  limits.max_total_bytes = 100;
  RendezvousStore store(limits);
  store.Open("1.0");
  ASSERT_TRUE(store.Set("1.0", "a", std::string(49, 'x')).ok());  // 50 bytes with its key
  ASSERT_TRUE(store.Set("1.0", "b", std::string(49, 'x')).ok());  // 100
  Status s = store.Set("1.0", "c", "");
  EXPECT_EQ(s.code(), ErrorCode::kTooLarge);
  EXPECT_NE(s.message().find("over the limit of 100 bytes per allocation"), std::string::npos) << s.message();
  // Replacing a value frees the old one's bytes.
  ASSERT_TRUE(store.Set("1.0", "a", "").ok());                    // 51
  EXPECT_TRUE(store.Set("1.0", "c", std::string(48, 'x')).ok());  // 100
  EXPECT_EQ(store.Set("1.0", "b", std::string(50, 'x')).code(), ErrorCode::kTooLarge);
}

TEST(RendezvousStore, AllocationsAreSeparate) {
  RendezvousStore store;
  store.Open("1.0");
  store.Open("2.0");
  ASSERT_TRUE(store.Set("1.0", "k", "one").ok());
  EXPECT_FALSE(store.Get("2.0", "k")->value);
  ASSERT_TRUE(store.Set("2.0", "k", "two").ok());
  EXPECT_EQ(*store.Get("1.0", "k")->value, "one");
  auto check = store.CheckKeys("1.0", {"k", "other"});
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->set, std::vector<std::string>{"k"});
  EXPECT_EQ(check->missing, std::vector<std::string>{"other"});
}

TEST(RendezvousStore, CloseDropsTheKeysAndWakesEveryWaiter) {
  RendezvousStore store;
  store.Open("1.0");
  store.Open("2.0");
  ASSERT_TRUE(store.Set("1.0", "k", "v").ok());
  int woken = 0;
  (void)store.Get("1.0", "x", [&] { ++woken; });
  (void)store.Get("1.0", "y", [&] { ++woken; });
  (void)store.Get("2.0", "x", [&] { woken += 100; });
  store.Close("1.0");
  EXPECT_EQ(woken, 2);
  EXPECT_FALSE(store.IsOpen("1.0"));
  EXPECT_EQ(store.OpenCount(), 1u);
  for (Status s :
       {store.Set("1.0", "k", "v"), store.Get("1.0", "k").status(), store.CheckKeys("1.0", {"k"}).status()}) {
    EXPECT_EQ(s.code(), ErrorCode::kConflict);
    EXPECT_NE(s.message().find("allocation 1.0 has ended"), std::string::npos) << s.message();
  }
  store.Close("1.0");  // twice is harmless
  // Reopening (a recovered master) starts empty.
  store.Open("1.0");
  EXPECT_FALSE(store.Get("1.0", "k")->value);
  EXPECT_EQ(store.WaiterCount("2.0"), 1u);  // another allocation's waiter sleeps on
}

TEST(RendezvousStore, WaitersPerAllocationAreBounded) {
  RendezvousLimits limits;
  limits.max_waiters_per_allocation = 2;
  RendezvousStore store(limits);
  store.Open("1.0");
  ASSERT_TRUE(store.Get("1.0", "a", [] {}).ok());
  ASSERT_TRUE(store.Get("1.0", "b", [] {}).ok());
  auto third = store.Get("1.0", "c", [] {});
  EXPECT_EQ(third.status().code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(store.Get("1.0", "c").ok());  // a read that does not wait still answers
}

TEST(RendezvousStore, ConcurrentSettersAndWaitersAllMeet) {
  RendezvousStore store;
  store.Open("1.0");
  constexpr int kRanks = 8;
  std::atomic<int> seen{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      ASSERT_TRUE(store.Set("1.0", "rank/" + std::to_string(r), std::to_string(r)).ok());
      for (int peer = 0; peer < kRanks; ++peer) {
        const std::string key = "rank/" + std::to_string(peer);
        std::mutex mu;
        std::condition_variable cv;
        bool woken = false;
        auto got = store.Get("1.0", key, [&] {
          std::lock_guard lock(mu);
          woken = true;
          cv.notify_all();
        });
        if (!got->value) {
          std::unique_lock lock(mu);
          ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return woken; }));
          got = store.Get("1.0", key);
        }
        if (*got->value == std::to_string(peer)) ++seen;
      }
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(seen.load(), kRanks * kRanks);
  EXPECT_EQ(store.WaiterCount("1.0"), 0u);
}

}  // namespace
}  // namespace ring
