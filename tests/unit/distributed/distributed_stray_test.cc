// A connection from outside the group reaching a rank's Gloo listener while
// the group connects: any process on the host may connect to a port it
// believes is free or its own (a client retrying a server that has gone, a
// port picked by binding and closing), and the port may belong to a rank's
// listener at that moment. The group must connect regardless.
//
// Deterministic: both ranks' reads of each other's Gloo addresses are held
// until the ranks' new listening sockets (found in /proc) have each accepted
// a stray connection, which then closes at once or stays open and silent.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ring/trial/distributed.h"
#include "ring/trial/errors.h"
#include "ring/trial/kv_store.h"
#include "tests/unit/distributed/distributed_thread_ranks.h"

namespace ring::trial {
namespace {

using namespace std::chrono_literals;
using testing::LoopbackRank;
using testing::RunThreads;

// Ports of the TCP sockets of this process listening on 127.0.0.1.
std::set<uint16_t> OwnLoopbackListeners() {
  std::set<std::string> inodes;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::set<uint16_t> ports;
  std::ifstream table("/proc/self/net/tcp");
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    // "0100007F:9C41": 127.0.0.1 as the kernel stores it, then the port.
    if (state != "0A" || local.rfind("0100007F:", 0) != 0 || !inodes.count(inode)) continue;
    ports.insert(static_cast<uint16_t>(std::stoul(local.substr(9), nullptr, 16)));
  }
  return ports;
}

// A TCP connection to 127.0.0.1:port from outside the group.
class Stray {
 public:
  explicit Stray(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Stray() { Close(); }
  Stray(const Stray&) = delete;
  Stray& operator=(const Stray&) = delete;

  bool connected() const { return connected_; }
  // What a client of some other server would send first.
  void SendRequest() {
    const std::string request = "GET /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ASSERT_EQ(::send(fd_, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// An in-memory store on which the ranks' reads of the keys a Gloo group
// connects through ("<group>/gloo/.../<rank>") wait until Open(). A rank
// reads its peers' addresses only once its own pairs listen, so when both
// ranks wait here every listener exists and no pair has connected yet.
class HeldAddressStore final : public KeyValueStore {
 public:
  void set(const std::string& key, const Bytes& value) override { inner_->set(key, value); }
  Bytes get(const std::string& key, std::chrono::milliseconds timeout) override {
    if (IsAddressKey(key)) {
      std::unique_lock lock(mu_);
      ++held_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
    }
    return inner_->get(key, timeout);
  }
  bool check(const std::vector<std::string>& keys) override { return inner_->check(keys); }

  // Waits until `readers` reads are held; false after `timeout`.
  bool WaitHeld(int readers, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return held_ >= readers; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  // The last part a rank number, but not a rendezvous record ("<group>/rank/<rank>").
  static bool IsAddressKey(const std::string& key) {
    const size_t slash = key.rfind('/');
    const std::string last = key.substr(slash + 1);
    const bool digits =
        !last.empty() && std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; });
    return digits && slash != std::string::npos && !key.substr(0, slash).ends_with("/rank");
  }

  std::shared_ptr<KeyValueStore> inner_ = InMemoryStore();
  std::mutex mu_;  // guards held_ and open_
  std::condition_variable changed_;
  int held_ = 0;
  bool open_ = false;
};

enum class StrayBehaviour { kClosesAtOnce, kStaysSilent };

// Connects a two-rank Gloo group while a stray connection reaches every
// listener of the first attempt, then checks the group works.
void ConnectDespiteStrays(StrayBehaviour behaviour) {
  const auto before = OwnLoopbackListeners();
  auto store = std::make_shared<HeldAddressStore>();
  std::vector<std::unique_ptr<Stray>> strays;
  std::thread intruder([&] {
    // Each rank holds at its first read of the other's addresses.
    if (!store->WaitHeld(2, 30s)) {
      ADD_FAILURE() << "the ranks never read each other's Gloo addresses";
      store->Open();
      return;
    }
    std::set<uint16_t> fresh;
    for (uint16_t port : OwnLoopbackListeners())
      if (!before.count(port)) fresh.insert(port);
    EXPECT_EQ(fresh.size(), 2u) << "one listener per rank of a two-rank group";
    for (uint16_t port : fresh) {
      strays.push_back(std::make_unique<Stray>(port));
      EXPECT_TRUE(strays.back()->connected()) << "port " << port;
      if (behaviour == StrayBehaviour::kStaysSilent) strays.back()->SendRequest();
    }
    // A listener that accepted its stray stops listening.
    const auto until = std::chrono::steady_clock::now() + 10s;
    auto accepted = [&] {
      const auto now = OwnLoopbackListeners();
      return std::none_of(fresh.begin(), fresh.end(), [&](uint16_t p) { return now.count(p) > 0; });
    };
    while (!accepted() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(accepted()) << "the listeners did not take the stray connections";
    if (behaviour == StrayBehaviour::kClosesAtOnce)
      for (auto& stray : strays) stray->Close();
    store->Open();
  });

  ProcessGroupOptions options;
  options.backend = "gloo";
  options.rendezvous_timeout = 20s;
  const auto t0 = std::chrono::steady_clock::now();
  RunThreads(2, [&](int rank) {
    auto group = ConnectProcessGroup(LoopbackRank(rank, 2), store, options);
    std::vector<int32_t> x = {rank + 1, 10 * (rank + 1)};
    group->allreduce(std::span<int32_t>(x), ReduceOp::kSum, 10s);
    EXPECT_EQ(x, (std::vector<int32_t>{3, 30}));
  });
  intruder.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 15s);
}

TEST(DistributedStrayTest, AStrayConnectionThatClosesAtOnceDoesNotFailTheConnect) {
  ConnectDespiteStrays(StrayBehaviour::kClosesAtOnce);
}

TEST(DistributedStrayTest, AStrayConnectionThatStaysSilentDoesNotHangTheConnect) {
  ConnectDespiteStrays(StrayBehaviour::kStaysSilent);
}

}  // namespace
}  // namespace ring::trial
