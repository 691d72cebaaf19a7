// The key-value stores ranks rendezvous through: one conformance suite run
// against the in-memory store, the file store and a prefix store over each,
// then what only the file store (atomic replacement, safe file names, several
// processes' instances on one directory) and the prefix store do.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"

namespace ring::trial {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Bytes = KeyValueStore::Bytes;

Bytes B(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

// A fresh directory per test, removed after it.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ring-kv-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct StoreKind {
  std::string name;
  // Two handles on one store (for a file store, two instances on its directory).
  std::function<std::pair<std::shared_ptr<KeyValueStore>, std::shared_ptr<KeyValueStore>>(
      const std::string& dir)>
      make;
};

std::vector<StoreKind> Kinds() {
  return {
      {"InMemory",
       [](const std::string&) {
         auto s = InMemoryStore();
         return std::make_pair(s, s);
       }},
      {"File", [](const std::string& dir) { return std::make_pair(FileStore(dir), FileStore(dir)); }},
      {"PrefixOverInMemory",
       [](const std::string&) {
         auto s = InMemoryStore();
         return std::make_pair(PrefixStore(s, "group"), PrefixStore(s, "group"));
       }},
      {"PrefixOverFile",
       [](const std::string& dir) {
         return std::make_pair(PrefixStore(FileStore(dir), "a/b"), PrefixStore(FileStore(dir), "a/b"));
       }},
  };
}

class DistributedStoreConformance : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override { std::tie(a_, b_) = GetParam().make(dir_.path()); }
  TempDir dir_;
  std::shared_ptr<KeyValueStore> a_, b_;
};

TEST_P(DistributedStoreConformance, SetThenGetAndReplace) {
  a_->set("rank/0", B("first"));
  EXPECT_EQ(b_->get("rank/0", 0ms), B("first"));
  a_->set("rank/0", B("second"));  // the last value wins
  EXPECT_EQ(b_->get("rank/0", 1s), B("second"));
  // Binary values, empty values and the largest value round-trip.
  Bytes binary(256);
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<uint8_t>(i);
  b_->set("bin", binary);
  EXPECT_EQ(a_->get("bin", 0ms), binary);
  a_->set("empty", {});
  EXPECT_TRUE(b_->get("empty", 0ms).empty());
  Bytes largest(4u << 20, 0x5a);
  a_->set("largest", largest);
  EXPECT_EQ(b_->get("largest", 0ms), largest);
  // Every allowed character, and the longest key the prefix leaves room for.
  a_->set("A-Za-z0-9._:/-", B("chars"));
  EXPECT_EQ(b_->get("A-Za-z0-9._:/-", 0ms), B("chars"));
  const std::string long_key(240, 'k');
  a_->set(long_key, B("long"));
  EXPECT_EQ(b_->get(long_key, 0ms), B("long"));
}

TEST_P(DistributedStoreConformance, GetTimesOutNamingTheKey) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    a_->get("never/set", 300ms);
    FAIL() << "get of a key never set returned";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("never/set"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("300 ms"), std::string::npos) << e.what();
  }
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 290ms);
  EXPECT_LT(waited, 2s);
}

TEST_P(DistributedStoreConformance, CheckDoesNotWait) {
  EXPECT_TRUE(a_->check({}));
  EXPECT_FALSE(a_->check({"x"}));
  a_->set("x", B("1"));
  EXPECT_TRUE(b_->check({"x"}));
  EXPECT_FALSE(b_->check({"x", "y"}));
  b_->set("y", B("2"));
  EXPECT_TRUE(a_->check({"x", "y"}));
}

TEST_P(DistributedStoreConformance, WaitingGetWakesWhenAnotherThreadSets) {
  // Timed from before the waiter's thread starts, as the set below is: a
  // thread that starts late on a busy machine must not shorten the wait.
  const auto t0 = std::chrono::steady_clock::now();
  auto waiter = std::async(std::launch::async, [&] {
    auto value = a_->get("late", 10s);
    return std::make_pair(value, std::chrono::steady_clock::now() - t0);
  });
  std::this_thread::sleep_for(300ms);
  b_->set("late", B("here"));
  auto [value, waited] = waiter.get();
  EXPECT_EQ(value, B("here"));
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 2s);
}

TEST_P(DistributedStoreConformance, ManyThreadsSetAndWaitForEachOther) {
  constexpr int kThreads = 8;
  std::vector<std::future<void>> done;
  for (int t = 0; t < kThreads; ++t)
    done.push_back(std::async(std::launch::async, [&, t] {
      auto& store = t % 2 ? *a_ : *b_;
      store.set("peer/" + std::to_string(t), B(std::to_string(t * t)));
      for (int other = 0; other < kThreads; ++other)
        EXPECT_EQ(store.get("peer/" + std::to_string(other), 10s), B(std::to_string(other * other)));
    }));
  for (auto& d : done) d.get();
}

TEST_P(DistributedStoreConformance, RefusesBadKeysAndLargeValuesNamingThem) {
  auto expect_refused = [&](const std::function<void()>& call, const std::string& named) {
    try {
      call();
      ADD_FAILURE() << "accepted " << named;
    } catch (const RendezvousError& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  };
  expect_refused([&] { a_->set("white space", B("v")); }, "\"white space\"");
  expect_refused([&] { a_->set("", B("v")); }, "\"\"");
  expect_refused([&] { a_->set("comma,key", B("v")); }, "comma,key");
  expect_refused([&] { a_->get("semi;colon", 0ms); }, "semi;colon");
  expect_refused([&] { a_->check({"ok", "bad key"}); }, "bad key");
  expect_refused([&] { a_->set(std::string(257, 'k'), B("v")); }, "257 bytes");
  expect_refused([&] { a_->set("big", Bytes((4u << 20) + 1)); }, "big");
  EXPECT_FALSE(a_->check({"big"}));
}

INSTANTIATE_TEST_SUITE_P(Stores, DistributedStoreConformance, ::testing::ValuesIn(Kinds()),
                         [](const auto& info) { return info.param.name; });

TEST(DistributedFileStoreTest, ReadersNeverSeeAPartialValue) {
  TempDir dir;
  auto writer = FileStore(dir.path());
  auto reader = FileStore(dir.path());
  // Values of 1 MiB, each filled with one byte; a torn read would mix two.
  writer->set("model", Bytes(1u << 20, 0));
  std::atomic<bool> stop{false};
  auto writes = std::async(std::launch::async, [&] {
    int n = 0;
    for (uint8_t fill = 1; !stop; ++fill, ++n) writer->set("model", Bytes(1u << 20, fill));
    return n;
  });
  int reads = 0;
  const auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until) {
    const auto value = reader->get("model", 1s);
    ASSERT_EQ(value.size(), 1u << 20);
    ASSERT_EQ(std::count(value.begin(), value.end(), value[0]), static_cast<long>(value.size()))
        << "read " << reads << " mixes two values";
    ++reads;
  }
  stop = true;
  EXPECT_GT(writes.get(), 5);
  EXPECT_GT(reads, 5);
  // Only the key's file is left: no temporary files behind.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename().string().rfind("k-", 0), 0u) << entry.path();
  }
  EXPECT_EQ(files, 1);
}

TEST(DistributedFileStoreTest, KeysBecomeSafeDistinctFileNames) {
  TempDir dir;
  auto store = FileStore(dir.path());
  // Keys that differ only where a naive mapping would merge them, and ones
  // that would escape the directory as paths.
  const std::vector<std::string> keys = {"a/b",
                                         "a_b",
                                         "a:b",
                                         "a_2Fb",
                                         "..",
                                         ".",
                                         "../escape",
                                         "/abs",
                                         "a//b",
                                         std::string(256, '/'),
                                         std::string(256, ':') + "x"};
  for (size_t i = 0; i < keys.size(); ++i) store->set(keys[i].substr(0, 256), B(std::to_string(i)));
  for (size_t i = 0; i < keys.size(); ++i)
    EXPECT_EQ(store->get(keys[i].substr(0, 256), 0ms), B(std::to_string(i)));
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_TRUE(entry.is_regular_file()) << entry.path();
    EXPECT_LE(entry.path().filename().string().size(), 255u);
  }
  EXPECT_EQ(files, keys.size());
  EXPECT_FALSE(fs::exists(fs::path(dir.path()).parent_path() / "escape"));
}

TEST(DistributedFileStoreTest, CreatesItsDirectoryOrSaysWhyNot) {
  TempDir dir;
  auto nested = FileStore(dir.path() + "/x/y");
  nested->set("k", B("v"));
  EXPECT_TRUE(fs::is_directory(dir.path() + "/x/y"));
  const std::string file = dir.path() + "/plain";
  FileStore(dir.path())->set("k", B("v"));
  { std::ofstream(file) << "not a directory"; }
  try {
    FileStore(file);
    FAIL() << "a file was accepted as the store's directory";
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
}

TEST(DistributedPrefixStoreTest, ScopesEveryKey) {
  auto inner = InMemoryStore();
  auto one = PrefixStore(inner, "one");
  auto two = PrefixStore(inner, "two");
  one->set("k", B("1"));
  two->set("k", B("2"));
  EXPECT_EQ(inner->get("one/k", 0ms), B("1"));
  EXPECT_EQ(inner->get("two/k", 0ms), B("2"));
  EXPECT_EQ(one->get("k", 0ms), B("1"));
  EXPECT_TRUE(one->check({"k"}));
  EXPECT_FALSE(one->check({"k", "other"}));
  // Nested scopes compose.
  PrefixStore(one, "inner")->set("k", B("3"));
  EXPECT_EQ(inner->get("one/inner/k", 0ms), B("3"));
  // A timeout names the key the caller asked for, within its scope.
  try {
    two->get("missing", 50ms);
    FAIL();
  } catch (const RendezvousError& e) {
    EXPECT_NE(std::string(e.what()).find("two/missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PrefixStore(inner, "bad prefix"), RendezvousError);
  EXPECT_THROW(PrefixStore(nullptr, "p"), RendezvousError);
  // The scoped key must still fit the limit.
  EXPECT_THROW(one->set(std::string(253, 'k'), B("v")), RendezvousError);
}

}  // namespace
}  // namespace ring::trial
