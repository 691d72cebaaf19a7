// MemoryStore: the model registry (models and their versions).
#include "master/store/memory_store.h"
#include "master/store/store_util.h"

namespace ring {
namespace {

Status MissingModel(const std::string& name) {
  return NotFound("model \"" + name + "\" not found");
}

Status MissingVersion(const std::string& model, int64_t version) {
  return NotFound("model \"" + model + "\" has no version " + std::to_string(version));
}

}  // namespace

Result<ModelRecord> MemoryStore::CreateModel(const ModelRecord& m) {
  std::lock_guard lock(mu_);
  if (m.name.empty()) return InvalidArgument("a model needs a name");
  if (models_.contains(m.name)) return Conflict("model \"" + m.name + "\" exists already");
  ModelRecord stored = m;
  stored.id = next_model_id_++;
  stored.created_at = stored.updated_at = NowRfc3339();
  stored.num_versions = stored.last_version = 0;
  models_[m.name] = stored;
  return stored;
}

Result<ModelRecord> MemoryStore::GetModel(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return MissingModel(name);
  ModelRecord m = it->second;
  m.num_versions = static_cast<int64_t>(VersionsWhere([&](const auto& v) { return v.model == name; }).size());
  return m;
}

Result<std::vector<ModelRecord>> MemoryStore::ListModels() {
  std::lock_guard lock(mu_);
  std::vector<ModelRecord> out;
  for (const auto& [name, m] : models_) {
    out.push_back(m);
    out.back().num_versions = 0;
  }
  for (const auto& [key, v] : model_versions_)
    for (auto& m : out)
      if (m.name == key.first) ++m.num_versions;
  return out;
}

Status MemoryStore::UpdateModel(const std::string& name, const ModelUpdate& u) {
  std::lock_guard lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return MissingModel(name);
  if (u.description) it->second.description = *u.description;
  if (u.labels) it->second.labels = *u.labels;
  if (u.archived) it->second.archived = *u.archived;
  it->second.updated_at = NowRfc3339();
  return Status::Ok();
}

Result<std::vector<ModelVersionRecord>> MemoryStore::DeleteModel(const std::string& name) {
  std::lock_guard lock(mu_);
  if (!models_.contains(name)) return MissingModel(name);
  auto removed = VersionsWhere([&](const auto& v) { return v.model == name; });
  std::erase_if(model_versions_, [&](const auto& entry) { return entry.first.first == name; });
  models_.erase(name);
  return removed;
}

Result<ModelVersionRecord> MemoryStore::AddModelVersion(const ModelVersionRecord& v) {
  std::lock_guard lock(mu_);
  auto it = models_.find(v.model);
  if (it == models_.end()) return MissingModel(v.model);
  if (!checkpoints_.contains(v.checkpoint_uuid))
    return InvalidArgument("checkpoint " + v.checkpoint_uuid + " is not registered");
  ModelVersionRecord stored = v;
  stored.version = ++it->second.last_version;
  stored.created_at = stored.updated_at = NowRfc3339();
  model_versions_[{v.model, stored.version}] = stored;
  return stored;
}

Result<ModelVersionRecord> MemoryStore::GetModelVersion(const std::string& model, int64_t version) {
  std::lock_guard lock(mu_);
  if (!models_.contains(model)) return MissingModel(model);
  auto it = model_versions_.find({model, version});
  if (it == model_versions_.end()) return MissingVersion(model, version);
  return it->second;
}

Result<std::vector<ModelVersionRecord>> MemoryStore::ListModelVersions(const std::string& model) {
  std::lock_guard lock(mu_);
  if (!models_.contains(model)) return MissingModel(model);
  return VersionsWhere([&](const auto& v) { return v.model == model; });
}

Status MemoryStore::UpdateModelVersion(const std::string& model, int64_t version,
                                       const ModelVersionUpdate& u) {
  std::lock_guard lock(mu_);
  if (!models_.contains(model)) return MissingModel(model);
  auto it = model_versions_.find({model, version});
  if (it == model_versions_.end()) return MissingVersion(model, version);
  ModelVersionRecord& v = it->second;
  if (u.name) v.name = *u.name;
  if (u.notes) v.notes = *u.notes;
  if (u.metadata_json) v.metadata_json = *u.metadata_json;
  if (u.labels) v.labels = *u.labels;
  v.updated_at = NowRfc3339();
  return Status::Ok();
}

Status MemoryStore::DeleteModelVersion(const std::string& model, int64_t version) {
  std::lock_guard lock(mu_);
  if (!models_.contains(model)) return MissingModel(model);
  if (model_versions_.erase({model, version}) == 0) return MissingVersion(model, version);
  return Status::Ok();
}

Result<std::vector<ModelVersionRecord>> MemoryStore::ListCheckpointModelVersions(const std::string& uuid) {
  std::lock_guard lock(mu_);
  return VersionsWhere([&](const auto& v) { return v.checkpoint_uuid == uuid; });
}

Result<std::vector<ModelVersionRecord>> MemoryStore::ListExperimentModelVersions(int64_t experiment_id) {
  std::lock_guard lock(mu_);
  return VersionsWhere([&](const auto& v) {
    auto c = checkpoints_.find(v.checkpoint_uuid);
    if (c == checkpoints_.end()) return false;
    auto t = trials_.find(c->second.trial_id);
    return t != trials_.end() && t->second.experiment_id == experiment_id;
  });
}

Result<std::vector<std::string>> MemoryStore::ListModelVersionCheckpoints() {
  std::lock_guard lock(mu_);
  std::set<std::string> uuids;
  for (const auto& [key, v] : model_versions_) uuids.insert(v.checkpoint_uuid);
  return std::vector<std::string>(uuids.begin(), uuids.end());
}

}  // namespace ring
