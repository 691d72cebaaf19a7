#include "master/store/record_json.h"

#include <nlohmann/json.hpp>

namespace ring {

std::string_view ToString(CheckpointState state) {
  return state == CheckpointState::kDeleted ? "DELETED" : "ACTIVE";
}

std::string StorageJson(const CheckpointStorage& storage) {
  return nlohmann::json{
      {"type", storage.type}, {"host_path", storage.host_path}, {"storage_path", storage.storage_path}}
      .dump();
}

Result<CheckpointStorage> StorageFromJson(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return Internal("storage is not a JSON object: " + text.substr(0, 200));
  CheckpointStorage storage;
  const auto text_of = [&j](const char* key, std::string& out) {
    if (const auto it = j.find(key); it != j.end() && it->is_string()) out = it->get<std::string>();
  };
  text_of("type", storage.type);
  text_of("host_path", storage.host_path);
  text_of("storage_path", storage.storage_path);
  return storage;
}

std::string FilesJson(const std::vector<CheckpointFile>& files) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : files) list.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  return list.dump();
}

Result<std::vector<CheckpointFile>> FilesFromJson(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return Internal("resources are not a JSON list: " + text.substr(0, 200));
  std::vector<CheckpointFile> files;
  files.reserve(j.size());
  for (const auto& f : j) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
        !f["size"].is_number_integer() || !f.contains("sha256") || !f["sha256"].is_string())
      return Internal("a resource is not {path, size, sha256}: " + f.dump().substr(0, 200));
    files.push_back({f["path"].get<std::string>(), f["size"].get<int64_t>(), f["sha256"].get<std::string>()});
  }
  return files;
}

std::string PlacementsJson(const std::vector<Placement>& placements) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : placements) list.push_back({{"agent_id", p.agent_id}, {"slot_ids", p.slot_ids}});
  return list.dump();
}

Result<std::vector<Placement>> PlacementsFromJson(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return Internal("placements are not a JSON list: " + text.substr(0, 200));
  std::vector<Placement> placements;
  placements.reserve(j.size());
  for (const auto& p : j) {
    if (!p.is_object() || !p.contains("agent_id") || !p["agent_id"].is_string())
      return Internal("a placement is not {agent_id, slot_ids}: " + p.dump().substr(0, 200));
    Placement placement{p["agent_id"].get<std::string>(), {}};
    if (const auto ids = p.find("slot_ids"); ids != p.end() && ids->is_array())
      for (const auto& id : *ids)
        if (id.is_number_integer()) placement.slot_ids.push_back(id.get<int>());
    placements.push_back(std::move(placement));
  }
  return placements;
}

std::string SlotsJson(const std::vector<proto::Slot>& slots) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : slots) list.push_back({{"id", s.id}, {"type", s.type}, {"uuid", s.uuid}});
  return list.dump();
}

Result<std::vector<proto::Slot>> SlotsFromJson(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return Internal("slots are not a JSON list: " + text.substr(0, 200));
  std::vector<proto::Slot> slots;
  slots.reserve(j.size());
  for (const auto& s : j) {
    if (!s.is_object() || !s.contains("id") || !s["id"].is_number_integer() || !s.contains("type") ||
        !s["type"].is_string())
      return Internal("a slot is not {id, type, uuid}: " + s.dump().substr(0, 200));
    proto::Slot slot{s["id"].get<int>(), s["type"].get<std::string>(), {}};
    if (const auto uuid = s.find("uuid"); uuid != s.end() && uuid->is_string())
      slot.uuid = uuid->get<std::string>();
    slots.push_back(std::move(slot));
  }
  return slots;
}

}  // namespace ring
