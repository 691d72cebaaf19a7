#include "distributed/gloo_store.h"

#include <algorithm>

#include "distributed/store_keys.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

// Gloo's keys are "<rank>" (its pair addresses) and "rank_<rank>" (its host).
std::string WhoseKey(const std::string& key) {
  const std::string digits = key.rfind("rank_", 0) == 0 ? key.substr(5) : key;
  if (!digits.empty() &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return "rank " + digits;
  return "a rank";
}

}  // namespace

GlooStore::GlooStore(std::shared_ptr<KeyValueStore> store, std::string group,
                     std::chrono::steady_clock::time_point deadline, Timeout timeout)
    : store_(std::move(store)), group_(std::move(group)), deadline_(deadline), timeout_(timeout) {}

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  store_->set(key, KeyValueStore::Bytes(data.begin(), data.end()));
}

std::vector<char> GlooStore::get(const std::string& key) {
  const auto bytes = Read(key, deadline_);
  return std::vector<char>(bytes.begin(), bytes.end());
}

void GlooStore::wait(const std::vector<std::string>& keys) {
  for (const auto& key : keys) Read(key, deadline_);
}

void GlooStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  const auto until = std::min(deadline_, std::chrono::steady_clock::now() + timeout);
  for (const auto& key : keys) Read(key, until);
}

KeyValueStore::Bytes GlooStore::Read(const std::string& key, std::chrono::steady_clock::time_point until) {
  try {
    return store_->get(key, TimeLeft(until));
  } catch (const RendezvousError&) {
    if (std::chrono::steady_clock::now() < until) throw;  // the store failed, not the wait
    throw RendezvousError(
        "rendezvous of group " + group_ + " timed out after " + DescribeTimeout(timeout_) +
        " while connecting Gloo: " + WhoseKey(key) +
        " arrived but did not publish its Gloo addresses (it stopped, or could not listen)");
  }
}

}  // namespace ring::trial::detail
