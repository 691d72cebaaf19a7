#pragma once
// The services tasks announce for the proxy: task id → who owns it and
// where its server listens (the node its allocation runs on, as the master
// placed it, and the port the task named). The one owner of that table.
// An announcement belongs to its allocation: once the allocation is no
// longer live (the predicate given at construction, the lifecycle's
// AllocationTokens) it is forgotten, and the task is not served until an
// allocation of it announces again. Thread-safe (mu_): announcements come on
// the API's io threads, lookups on the proxy's.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace ring {

struct AnnouncedService {
  int64_t task_id = 0;
  std::string allocation_id;  // whose end forgets it
  std::string owner;          // the task's owner
  std::string host;           // the node rank 0 runs on
  uint16_t port = 0;
  std::string name;  // what the task calls it ("jupyter"), may be empty
  // A secret the server requires, sent to it on every proxied request as
  // `Authorization: token <token>` (Jupyter's form); empty: none. Never shown.
  std::string token;
};

class ServiceRegistry {
 public:
  using LivePredicate = std::function<bool(const std::string& allocation_id)>;
  explicit ServiceRegistry(LivePredicate live) : live_(std::move(live)) {}

  // Records (or replaces) the task's service.
  void Announce(AnnouncedService service);
  // The task's service while its allocation lives.
  std::optional<AnnouncedService> Lookup(int64_t task_id);
  // Forgets what the allocation announced (its end, when told).
  void Forget(const std::string& allocation_id);
  size_t size() const;

 private:
  LivePredicate live_;
  mutable std::mutex mu_;  // guards services_
  std::map<int64_t, AnnouncedService> services_;
};

}  // namespace ring
