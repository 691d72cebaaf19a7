#include "distributed/rendezvous.h"

#include <unistd.h>

#include <random>

#include <nlohmann/json.hpp>

#include "distributed/store_keys.h"
#include "ring/trial/errors.h"

namespace ring::trial::detail {
namespace {

std::string RankKey(const std::string& group, int rank) {
  return group + "/rank/" + std::to_string(rank);
}

std::string NewNonce() {
  std::random_device device;
  const uint64_t value = (uint64_t{device()} << 32) | device();
  return std::to_string(value);
}

KeyValueStore::Bytes Encode(const RankRecord& r) {
  const nlohmann::json j = {{"rank", r.rank},
                            {"world_size", r.world_size},
                            {"local_rank", r.local_rank},
                            {"local_world_size", r.local_world_size},
                            {"agent_id", r.agent_id},
                            {"address", r.address},
                            {"pid", r.pid},
                            {"nonce", r.nonce}};
  const std::string text = j.dump();
  return KeyValueStore::Bytes(text.begin(), text.end());
}

RankRecord Decode(const KeyValueStore::Bytes& bytes, const std::string& group, int rank) {
  const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  try {
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    RankRecord r;
    r.rank = j.at("rank").get<int>();
    r.world_size = j.at("world_size").get<int>();
    r.local_rank = j.at("local_rank").get<int>();
    r.local_world_size = j.at("local_world_size").get<int>();
    r.agent_id = j.at("agent_id").get<std::string>();
    r.address = j.at("address").get<std::string>();
    r.pid = j.at("pid").get<int64_t>();
    r.nonce = j.at("nonce").get<std::string>();
    return r;
  } catch (const std::exception& e) {
    throw RendezvousError("the record of rank " + std::to_string(rank) + " in process group " + group +
                          " (key " + RankKey(group, rank) + ") is not one this runtime wrote: " + e.what());
  }
}

std::string Where(const RankRecord& r) {
  return "pid " + std::to_string(r.pid) + " on agent " + (r.agent_id.empty() ? "?" : r.agent_id) + " at " +
         r.address;
}

[[noreturn]] void ThrowTimedOut(KeyValueStore& store, const std::string& group, int world_size,
                                Timeout timeout) {
  std::vector<int> missing;
  for (int r = 0; r < world_size; ++r)
    if (!store.check({RankKey(group, r)})) missing.push_back(r);
  std::string who = missing.empty()
                        ? "every rank arrived only after the deadline"
                        : DescribeRanks(missing) + " of " + std::to_string(world_size) + " never arrived";
  throw RendezvousError("rendezvous of group " + group + " timed out after " + DescribeTimeout(timeout) +
                        ": " + who);
}

}  // namespace

void CheckRankInfo(const RankInfo& self) {
  if (self.world_size < 1 || self.rank < 0 || self.rank >= self.world_size)
    throw ConfigError("rank " + std::to_string(self.rank) + " is not within world size " +
                      std::to_string(self.world_size));
  if (self.local_world_size < 1 || self.local_rank < 0 || self.local_rank >= self.local_world_size)
    throw ConfigError("local rank " + std::to_string(self.local_rank) + " is not within local world size " +
                      std::to_string(self.local_world_size));
  if (self.address.empty())
    throw ConfigError("rank " + std::to_string(self.rank) +
                      " has no address for the other ranks to reach it at (RING_AGENT_ADDR)");
}

std::string DescribeRanks(const std::vector<int>& ranks) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    // Three or more in a row read better as a range.
    if (j >= i + 2) {
      parts.push_back(std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]));
    } else {
      for (size_t k = i; k <= j; ++k) parts.push_back(std::to_string(ranks[k]));
    }
    i = j + 1;
  }
  const bool plural = ranks.size() > 1;
  std::string out = plural ? "ranks " : "rank ";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

std::vector<RankRecord> Rendezvous(const RankInfo& self, KeyValueStore& store, const std::string& group,
                                   std::chrono::steady_clock::time_point deadline, Timeout timeout) {
  CheckRankInfo(self);
  const std::string own_key = RankKey(group, self.rank);
  CheckKey(own_key);
  // Only this rank writes its key: if it is there, an earlier group of this
  // name left it, and its ranks' addresses would be read as this group's.
  if (store.check({own_key}))
    throw ConfigError(
        "rank " + std::to_string(self.rank) + " of process group " + group +
        " is already in the store: a group of this name was connected before (groups of one trial "
        "need distinct names, ProcessGroupOptions::name), or another process was started with RANK " +
        std::to_string(self.rank));
  RankRecord mine{self.rank,     self.world_size, self.local_rank, self.local_world_size,
                  self.agent_id, self.address,    ::getpid(),      NewNonce()};
  store.set(own_key, Encode(mine));

  std::vector<RankRecord> records(static_cast<size_t>(self.world_size));
  for (int r = 0; r < self.world_size; ++r) {
    if (r == self.rank) continue;
    KeyValueStore::Bytes bytes;
    try {
      bytes = store.get(RankKey(group, r), TimeLeft(deadline));
    } catch (const RendezvousError&) {
      if (std::chrono::steady_clock::now() < deadline) throw;  // the store failed, not the wait
      ThrowTimedOut(store, group, self.world_size, timeout);
    }
    RankRecord record = Decode(bytes, group, r);
    if (record.rank != r)
      throw RendezvousError("the record under " + RankKey(group, r) + " names rank " +
                            std::to_string(record.rank));
    if (record.world_size != self.world_size)
      throw RendezvousError("ranks of process group " + group + " disagree on the world size: rank " +
                            std::to_string(r) + " (" + Where(record) + ") has " +
                            std::to_string(record.world_size) + ", rank " + std::to_string(self.rank) +
                            " has " + std::to_string(self.world_size) +
                            "; every rank must be started with the same WORLD_SIZE");
    records[static_cast<size_t>(r)] = std::move(record);
  }
  // Another process started with this rank would have replaced the record.
  const RankRecord now = Decode(store.get(own_key, std::chrono::milliseconds(0)), group, self.rank);
  if (now.nonce != mine.nonce)
    throw RendezvousError("two processes claim rank " + std::to_string(self.rank) + " of process group " +
                          group + ": this one (" + Where(mine) + ") and " + Where(now) +
                          "; every rank needs its own RANK");
  records[static_cast<size_t>(self.rank)] = std::move(mine);
  return records;
}

}  // namespace ring::trial::detail
