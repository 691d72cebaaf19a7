#include "distributed/gloo/gloo_agreement.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "distributed/store_keys.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

KeyValueStore::Bytes Encode(const std::vector<std::string>& failures) {
  const std::string text = nlohmann::json(failures).dump();
  return KeyValueStore::Bytes(text.begin(), text.end());
}

std::vector<std::string> Decode(const KeyValueStore::Bytes& bytes, const std::string& key) {
  const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_array() && std::all_of(j.begin(), j.end(), [](const auto& item) { return item.is_string(); }))
    return j.get<std::vector<std::string>>();
  throw RendezvousError("the value of rendezvous key " + key + " is not one this runtime wrote");
}

}  // namespace

KeyValueStore::Bytes ReadBeforeDeadline(KeyValueStore& store, const GroupPlan& plan, const std::string& key,
                                        const std::string& missing) {
  try {
    return store.get(key, TimeLeft(plan.deadline));
  } catch (const RendezvousError&) {
    if (std::chrono::steady_clock::now() < plan.deadline) throw;  // the store failed, not the wait
    throw RendezvousError("rendezvous of group " + plan.name + " timed out after " +
                          DescribeTimeout(plan.timeout) + " while connecting Gloo: " + missing);
  }
}

std::vector<std::string> AgreeOn(KeyValueStore& store, const GroupPlan& plan, const std::string& step,
                                 const std::vector<std::string>& failures) {
  const int self = plan.self.rank;
  if (self != 0) {
    store.set(step + "/" + std::to_string(self), Encode(failures));
    return Decode(
        ReadBeforeDeadline(store, plan, step,
                           "rank 0 did not say whether every rank's Gloo pairs " + step + " (it stopped)"),
        step);
  }
  std::vector<std::string> all = failures;
  for (int r = 1; r < plan.self.world_size; ++r) {
    const std::string key = step + "/" + std::to_string(r);
    const auto theirs =
        Decode(ReadBeforeDeadline(store, plan, key,
                                  "rank " + std::to_string(r) + " did not report whether its Gloo pairs " +
                                      step + " (it stopped, or is still waiting for a peer)"),
               key);
    all.insert(all.end(), theirs.begin(), theirs.end());
  }
  store.set(step, Encode(all));
  return all;
}

}  // namespace ring::trial::detail
