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

}  // namespace ring
