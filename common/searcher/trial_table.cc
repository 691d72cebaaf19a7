#include "common/searcher/trial_table.h"

#include <array>
#include <string>

#include "common/searcher/snapshot_json.h"

namespace ring::search {
namespace {

constexpr std::array<std::pair<TrialEnd, const char*>, 5> kEndNames{{
    {TrialEnd::kNone, "none"},
    {TrialEnd::kClosed, "closed"},
    {TrialEnd::kErrored, "errored"},
    {TrialEnd::kInvalidHparams, "invalid_hparams"},
    {TrialEnd::kCanceled, "canceled"},
}};

const char* EndName(TrialEnd end) {
  for (const auto& [e, name] : kEndNames)
    if (e == end) return name;
  return "none";
}

TrialEnd ParseEnd(const std::string& text) {
  for (const auto& [e, name] : kEndNames)
    if (text == name) return e;
  throw SnapshotError("unknown trial end \"" + text + "\"");
}

}  // namespace

RequestId TrialTable::Add() {
  const RequestId id = next_id_++;
  trials_[id] = TrialEntry{};
  ++live_;
  return id;
}

TrialEntry* TrialTable::Find(RequestId id) {
  auto it = trials_.find(id);
  return it == trials_.end() ? nullptr : &it->second;
}

const TrialEntry* TrialTable::Find(RequestId id) const {
  auto it = trials_.find(id);
  return it == trials_.end() ? nullptr : &it->second;
}

void TrialTable::End(RequestId id, TrialEnd end) {
  TrialEntry* t = Find(id);
  if (!t || t->ended() || end == TrialEnd::kNone) return;
  t->end = end;
  t->operation.reset();
  t->closed = true;
  --live_;
  ++ended_[end];
}

int64_t TrialTable::ended(TrialEnd end) const {
  auto it = ended_.find(end);
  return it == ended_.end() ? 0 : it->second;
}

nlohmann::json TrialTable::ToJson() const {
  auto trials = nlohmann::json::array();
  for (const auto& [id, t] : trials_) {
    trials.push_back({{"id", id},
                      {"operation", t.operation ? nlohmann::json(*t.operation) : nlohmann::json()},
                      {"target", t.target},
                      {"created", t.created},
                      {"closed", t.closed},
                      {"end", EndName(t.end)}});
  }
  return {{"next_request_id", next_id_}, {"trials", trials}};
}

TrialTable TrialTable::FromJson(const nlohmann::json& j) {
  TrialTable table;
  table.next_id_ = IntField(j, "next_request_id", 1);
  for (const auto& item : ArrayOf(Field(j, "trials"), "trials")) {
    const RequestId id = IntField(item, "id", 1, table.next_id_ - 1);
    if (table.trials_.count(id)) throw SnapshotError("trial " + std::to_string(id) + " is listed twice");
    TrialEntry t;
    const auto& op = Field(item, "operation");
    if (!op.is_null()) t.operation = IntOf(op, "operation", 1);
    t.target = IntField(item, "target", 0);
    t.created = BoolField(item, "created");
    t.closed = BoolField(item, "closed");
    t.end = ParseEnd(StringOf(Field(item, "end"), "end"));
    if (t.operation && (t.closed || *t.operation != t.target))
      throw SnapshotError("trial " + std::to_string(id) + " has an operation it cannot have");
    if (t.ended() && !t.closed)
      throw SnapshotError("trial " + std::to_string(id) + " ended but is not closed");
    table.trials_[id] = t;
    if (t.ended())
      ++table.ended_[t.end];
    else
      ++table.live_;
  }
  if (static_cast<int64_t>(table.trials_.size()) != table.next_id_ - 1)
    throw SnapshotError("trials must list every request id below next_request_id");
  return table;
}

}  // namespace ring::search
