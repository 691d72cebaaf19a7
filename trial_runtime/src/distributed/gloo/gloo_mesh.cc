#include "distributed/gloo/gloo_mesh.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gloo/transport/context.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "distributed/gloo/gloo_agreement.h"
#include "distributed/gloo/gloo_message.h"
#include "distributed/store_keys.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

// A stray connection is rare; a peer that cannot be reached at all fails
// every attempt alike, and is reported after the last.
constexpr int kAttempts = 3;
// Gloo's collectives use slot prefixes 0x01-0x08, the group's pair exchange 0x52.
constexpr uint8_t kGreetingSlotPrefix = 0x47;

using Greeting = std::array<char, 64>;

// What rank `from` says to rank `to`: its rendezvous nonce, which no other
// process has, the attempt and both ranks.
Greeting GreetingOf(const GroupPlan& plan, int attempt, int from, int to) {
  Greeting greeting{};
  std::snprintf(greeting.data(), greeting.size(), "ring-gloo %s %d %d>%d",
                plan.ranks[static_cast<size_t>(from)].nonce.c_str(), attempt, from, to);
  return greeting;
}

// "127.0.0.1:37835" for a Gloo TCP address (Gloo's own messages print the
// port in network byte order: 52115 for 37835).
std::string Describe(const std::vector<char>& bytes) {
  const gloo::transport::tcp::Address address(bytes);
  const sockaddr_storage& storage = address.getSockaddr();
  char host[INET6_ADDRSTRLEN] = "?";
  if (storage.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (storage.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "an address of family " + std::to_string(storage.ss_family);
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

// A gloo::Context over pairs connected here rather than by Gloo's
// rendezvous (which trusts whatever connects first).
class MeshContext final : public gloo::Context {
 public:
  MeshContext(int rank, int size, std::shared_ptr<gloo::transport::Device> device,
              std::shared_ptr<gloo::transport::Context> transport)
      : gloo::Context(rank, size) {
    device_ = std::move(device);
    transportContext_ = std::move(transport);
  }
};

// One attempt at connecting this rank's pairs, under the keys
// "gloo/<attempt>/..." of the group's store.
class MeshAttempt {
 public:
  MeshAttempt(const GroupPlan& plan, const std::shared_ptr<gloo::transport::Device>& device, int attempt)
      : plan_(plan),
        attempt_(attempt),
        self_(plan.self.rank),
        store_(PrefixStore(plan.store, "gloo/" + std::to_string(attempt))),
        device_(device),
        transport_(device->createContext(self_, plan.self.world_size)) {
    transport_->setTimeout(Left());
  }

  KeyValueStore& store() { return *store_; }

  // Creates a pair (a listening socket) for every peer, publishes their
  // addresses, then connects each pair to the peer's; returns what failed.
  std::vector<std::string> Connect() {
    std::vector<char> mine;
    for (int peer : Peers()) {
      const auto bytes = transport_->createPair(peer)->address().bytes();
      mine.insert(mine.end(), bytes.begin(), bytes.end());
    }
    store_->set(AddressKey(self_), KeyValueStore::Bytes(mine.begin(), mine.end()));
    std::vector<std::string> failures;
    for (int peer : Peers()) {
      const auto address = PeerAddress(peer, mine.size());
      try {
        transport_->getPair(peer)->connect(address);
      } catch (const std::exception& e) {
        failures.push_back("rank " + std::to_string(self_) + "'s pair with rank " + std::to_string(peer) +
                           " (at " + Describe(address) + "): " + GlooMessage(e.what()));
      }
    }
    return failures;
  }

  // Greets every peer over its pair, and checks that every peer's greeting
  // arrives over it; returns what failed.
  std::vector<std::string> Greet() {
    struct Exchange {
      int peer;
      Greeting out, in;
      std::unique_ptr<gloo::transport::UnboundBuffer> send, recv;
    };
    const uint64_t slot = gloo::Slot::build(kGreetingSlotPrefix, 0);
    std::vector<Exchange> exchanges;
    for (int peer : Peers())
      exchanges.push_back({peer, GreetingOf(plan_, attempt_, self_, peer), {}, {}, {}});
    std::vector<std::string> failures;
    try {
      for (auto& x : exchanges) {
        x.recv = transport_->createUnboundBuffer(x.in.data(), x.in.size());
        x.send = transport_->createUnboundBuffer(x.out.data(), x.out.size());
        x.recv->recv(x.peer, slot);
        x.send->send(x.peer, slot);
      }
      for (auto& x : exchanges) {
        x.recv->waitRecv(nullptr, Left());
        x.send->waitSend(nullptr, Left());
        if (x.in != GreetingOf(plan_, attempt_, x.peer, self_))
          failures.push_back("rank " + std::to_string(self_) + "'s pair with rank " + std::to_string(x.peer) +
                             " reached another process (its first message is not rank " +
                             std::to_string(x.peer) + "'s greeting)");
      }
    } catch (const std::exception& e) {
      // Gloo fails every pending operation of the context with the first error.
      failures.push_back("rank " + std::to_string(self_) +
                         " did not hear from every peer: " + GlooMessage(e.what()));
    }
    return failures;
  }

  std::shared_ptr<gloo::Context> Context() {
    auto context = std::make_shared<MeshContext>(self_, plan_.self.world_size, device_, transport_);
    context->setTimeout(Left());
    return context;
  }

 private:
  std::vector<int> Peers() const {
    std::vector<int> peers;
    for (int r = 0; r < plan_.self.world_size; ++r)
      if (r != self_) peers.push_back(r);
    return peers;
  }

  static std::string AddressKey(int rank) { return "addresses/" + std::to_string(rank); }

  std::chrono::milliseconds Left() const {
    return std::max(TimeLeft(plan_.deadline), std::chrono::milliseconds(1));
  }

  // The address of `peer`'s pair with this rank. Every rank publishes one
  // address per peer, in rank order, so its list is as long as this rank's.
  std::vector<char> PeerAddress(int peer, size_t list_bytes) {
    const auto list = ReadBeforeDeadline(
        *store_, plan_, AddressKey(peer),
        "rank " + std::to_string(peer) +
            " arrived but did not publish its Gloo addresses (it stopped, or could not listen)");
    const size_t each = list_bytes / Peers().size();
    if (list.size() != list_bytes)
      throw RendezvousError("the Gloo addresses rank " + std::to_string(peer) + " of process group " +
                            plan_.name + " published (" + std::to_string(list.size()) +
                            " bytes) are not this runtime's (" + std::to_string(list_bytes) + " bytes)");
    const size_t index = static_cast<size_t>(self_ < peer ? self_ : self_ - 1);
    return std::vector<char>(list.begin() + static_cast<std::ptrdiff_t>(index * each),
                             list.begin() + static_cast<std::ptrdiff_t>((index + 1) * each));
  }

  const GroupPlan& plan_;
  int attempt_;
  int self_;
  std::shared_ptr<KeyValueStore> store_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::transport::Context> transport_;
};

}  // namespace

std::shared_ptr<gloo::Context> ConnectGlooMesh(const GroupPlan& plan,
                                               const std::shared_ptr<gloo::transport::Device>& device) {
  std::vector<std::string> failures;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (attempt > 0 && plan.self.rank == 0)
      std::cerr << "[ring.trial] process group " << plan.name << ": Gloo pairs failed (" << Join(failures)
                << "); connecting them again (attempt " << attempt + 1 << " of " << kAttempts << ")"
                << std::endl;
    MeshAttempt mesh(plan, device, attempt);
    failures = AgreeOn(mesh.store(), plan, "connected", mesh.Connect());
    if (failures.empty()) failures = AgreeOn(mesh.store(), plan, "greeted", mesh.Greet());
    if (failures.empty()) return mesh.Context();
  }
  throw RendezvousError("rendezvous of group " + plan.name + ": the ranks could not connect over Gloo in " +
                        std::to_string(kAttempts) + " attempts; in the last: " + Join(failures));
}

}  // namespace ring::trial::detail
