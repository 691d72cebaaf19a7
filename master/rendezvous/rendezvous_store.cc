#include "master/rendezvous/rendezvous_store.h"

namespace ring {
namespace {

bool KeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == ':' || c == '/' || c == '-';
}

// The key as an error message shows it: quoted, printable, at most 80 characters.
std::string Quoted(const std::string& key) {
  std::string out = "\"";
  for (size_t i = 0; i < key.size() && i < 80; ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (key.size() > 80) out += "...";
  return out + "\"";
}

Status Ended(const std::string& allocation_id) {
  return Conflict("allocation " + allocation_id + " has ended; its rendezvous store is gone");
}

}  // namespace

RendezvousStore::RendezvousStore(RendezvousLimits limits) : limits_(limits) {}

void RendezvousStore::Open(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  open_.try_emplace(allocation_id);
}

void RendezvousStore::Close(const std::string& allocation_id) {
  std::map<WaitId, Waiter> waiters;
  {
    std::lock_guard lock(mu_);
    auto it = open_.find(allocation_id);
    if (it == open_.end()) return;
    waiters = std::move(it->second.waiters);
    open_.erase(it);
  }
  for (auto& [id, w] : waiters) w.wake();
}

bool RendezvousStore::IsOpen(const std::string& allocation_id) const {
  std::lock_guard lock(mu_);
  return open_.count(allocation_id) > 0;
}

Status RendezvousStore::ValidateKey(const std::string& key) const {
  bool ok = !key.empty() && key.size() <= limits_.max_key_bytes;
  for (char c : key) ok = ok && KeyChar(c);
  if (ok) return Status::Ok();
  return InvalidArgument("rendezvous key " + Quoted(key) + " is invalid: a key is 1 to " +
                         std::to_string(limits_.max_key_bytes) +
                         " characters of A-Z, a-z, 0-9 and . _ : / -");
}

Result<RendezvousStore::Keys*> RendezvousStore::FindLocked(const std::string& allocation_id) {
  auto it = open_.find(allocation_id);
  if (it == open_.end()) return Ended(allocation_id);
  return &it->second;
}

Result<const RendezvousStore::Keys*> RendezvousStore::FindLocked(const std::string& allocation_id) const {
  auto it = open_.find(allocation_id);
  if (it == open_.end()) return Ended(allocation_id);
  return &it->second;
}

Status RendezvousStore::Set(const std::string& allocation_id, const std::string& key, std::string value) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  if (value.size() > limits_.max_value_bytes)
    return {ErrorCode::kTooLarge, "the value of rendezvous key " + Quoted(key) + " is " +
                                      std::to_string(value.size()) + " bytes, over the limit of " +
                                      std::to_string(limits_.max_value_bytes) + " bytes per value"};
  auto shared = std::make_shared<const std::string>(std::move(value));
  std::vector<Waker> wake;
  {
    std::lock_guard lock(mu_);
    auto found = FindLocked(allocation_id);
    if (!found.ok()) return found.status();
    Keys& keys = **found;
    auto existing = keys.values.find(key);
    const size_t replaced = existing == keys.values.end() ? 0 : key.size() + existing->second->size();
    if (existing == keys.values.end() && keys.values.size() >= limits_.max_keys)
      return InvalidArgument("allocation " + allocation_id + " already holds " +
                             std::to_string(limits_.max_keys) +
                             " rendezvous keys, the limit of keys per allocation");
    const size_t bytes = keys.bytes - replaced + key.size() + shared->size();
    if (bytes > limits_.max_total_bytes)
      return {ErrorCode::kTooLarge, "setting rendezvous key " + Quoted(key) + " would bring allocation " +
                                        allocation_id + " to " + std::to_string(bytes) +
                                        " bytes of keys and values, over the limit of " +
                                        std::to_string(limits_.max_total_bytes) + " bytes per allocation"};
    keys.bytes = bytes;
    keys.values[key] = std::move(shared);
    for (auto it = keys.waiters.begin(); it != keys.waiters.end();) {
      if (it->second.key != key) {
        ++it;
        continue;
      }
      wake.push_back(std::move(it->second.wake));
      it = keys.waiters.erase(it);
    }
  }
  for (auto& w : wake) w();
  return Status::Ok();
}

Result<RendezvousStore::Lookup> RendezvousStore::Get(const std::string& allocation_id, const std::string& key,
                                                     Waker wake) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  std::lock_guard lock(mu_);
  auto found = FindLocked(allocation_id);
  if (!found.ok()) return found.status();
  Keys& keys = **found;
  if (auto it = keys.values.find(key); it != keys.values.end()) return Lookup{it->second, 0};
  if (!wake) return Lookup{};
  if (keys.waiters.size() >= limits_.max_waiters_per_allocation)
    return Unavailable("allocation " + allocation_id + " already has " +
                       std::to_string(limits_.max_waiters_per_allocation) +
                       " waiting rendezvous reads, the limit; retry later");
  const WaitId id = next_wait_++;
  keys.waiters.emplace(id, Waiter{key, std::move(wake)});
  return Lookup{nullptr, id};
}

void RendezvousStore::CancelWait(const std::string& allocation_id, WaitId wait) {
  Waker dropped;  // destroyed after the lock is released
  std::lock_guard lock(mu_);
  auto found = FindLocked(allocation_id);
  if (!found.ok()) return;
  auto it = (*found)->waiters.find(wait);
  if (it == (*found)->waiters.end()) return;
  dropped = std::move(it->second.wake);
  (*found)->waiters.erase(it);
}

Result<RendezvousStore::Check> RendezvousStore::CheckKeys(const std::string& allocation_id,
                                                          const std::vector<std::string>& keys) const {
  for (const auto& key : keys)
    if (Status s = ValidateKey(key); !s.ok()) return s;
  std::lock_guard lock(mu_);
  auto found = FindLocked(allocation_id);
  if (!found.ok()) return found.status();
  Check out;
  for (const auto& key : keys) ((*found)->values.count(key) ? out.set : out.missing).push_back(key);
  return out;
}

size_t RendezvousStore::KeyCount(const std::string& allocation_id) const {
  std::lock_guard lock(mu_);
  auto it = open_.find(allocation_id);
  return it == open_.end() ? 0 : it->second.values.size();
}

size_t RendezvousStore::WaiterCount(const std::string& allocation_id) const {
  std::lock_guard lock(mu_);
  auto it = open_.find(allocation_id);
  return it == open_.end() ? 0 : it->second.waiters.size();
}

size_t RendezvousStore::OpenCount() const {
  std::lock_guard lock(mu_);
  return open_.size();
}

}  // namespace ring
