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

namespace ring {

std::string TaskSpecJson(const TaskSpec& t) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : t.bind_mounts)
    mounts.push_back({{"host_path", m.host_path},
                      {"container_path", m.container_path},
                      {"read_only", m.read_only},
                      {"propagation", m.propagation}});
  const EnvironmentConfig& e = t.environment;
  nlohmann::json env = {{"variables", e.variables},           {"cpu_variables", e.cpu_variables},
                        {"cuda_variables", e.cuda_variables}, {"cpu_image", e.cpu_image},
                        {"cuda_image", e.cuda_image},         {"force_pull_image", e.force_pull_image}};
  if (e.registry_auth) {
    const RegistryAuth& a = *e.registry_auth;
    env["registry_auth"] = {{"username", a.username},
                            {"password", a.password},
                            {"serveraddress", a.serveraddress},
                            {"email", a.email},
                            {"auth", a.auth},
                            {"identitytoken", a.identitytoken},
                            {"registrytoken", a.registrytoken}};
  }
  nlohmann::json j = {{"description", t.description},     {"argv", t.argv},         {"slots", t.slots},
                      {"resource_pool", t.resource_pool}, {"priority", t.priority}, {"weight", t.weight},
                      {"preemptible", t.preemptible},     {"environment", env},     {"bind_mounts", mounts},
                      {"has_context", t.has_context}};
  if (t.idle_timeout_s) j["idle_timeout_s"] = *t.idle_timeout_s;
  j["notebook_idle_type"] = ToString(t.notebook_idle_type);
  return j.dump();
}

Result<TaskSpec> TaskSpecFromJson(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return Internal("a task spec is not a JSON object: " + text.substr(0, 200));
  TaskSpec t;
  try {
    t.description = j.value("description", "");
    t.argv = j.value("argv", std::vector<std::string>{});
    t.slots = j.value("slots", int64_t{1});
    t.resource_pool = j.value("resource_pool", std::string("default"));
    t.priority = j.value("priority", int64_t{42});
    t.weight = j.value("weight", 1.0);
    t.preemptible = j.value("preemptible", false);
    t.has_context = j.value("has_context", false);
    if (auto it = j.find("idle_timeout_s"); it != j.end() && it->is_number_integer())
      t.idle_timeout_s = it->get<int64_t>();
    if (auto type = ParseNotebookIdleType(j.value("notebook_idle_type", ""))) t.notebook_idle_type = *type;
    if (auto env = j.find("environment"); env != j.end() && env->is_object()) {
      EnvironmentConfig& e = t.environment;
      e.variables = env->value("variables", std::map<std::string, std::string>{});
      e.cpu_variables = env->value("cpu_variables", std::map<std::string, std::string>{});
      e.cuda_variables = env->value("cuda_variables", std::map<std::string, std::string>{});
      e.cpu_image = env->value("cpu_image", "");
      e.cuda_image = env->value("cuda_image", "");
      e.force_pull_image = env->value("force_pull_image", false);
      if (auto a = env->find("registry_auth"); a != env->end() && a->is_object()) {
        RegistryAuth auth;
        auth.username = a->value("username", "");
        auth.password = a->value("password", "");
        auth.serveraddress = a->value("serveraddress", "");
        auth.email = a->value("email", "");
        auth.auth = a->value("auth", "");
        auth.identitytoken = a->value("identitytoken", "");
        auth.registrytoken = a->value("registrytoken", "");
        e.registry_auth = auth;
      }
    }
    if (auto mounts = j.find("bind_mounts"); mounts != j.end() && mounts->is_array())
      for (const auto& m : *mounts) {
        BindMount b;
        b.host_path = m.value("host_path", "");
        b.container_path = m.value("container_path", "");
        b.read_only = m.value("read_only", false);
        b.propagation = m.value("propagation", std::string("rprivate"));
        t.bind_mounts.push_back(std::move(b));
      }
  } catch (const nlohmann::json::exception& e) {
    return Internal(std::string("a task spec cannot be read: ") + e.what());
  }
  return t;
}

std::string WebhookTriggersJson(const std::vector<WebhookTrigger>& triggers) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : triggers) {
    nlohmann::json condition = nlohmann::json::object();
    if (t.type == WebhookTriggerType::kExperimentStateChange)
      condition["state"] = ToString(t.state);
    else
      condition["regex"] = t.regex;
    list.push_back({{"trigger_type", ToString(t.type)}, {"condition", std::move(condition)}});
  }
  return list.dump();
}

Result<std::vector<WebhookTrigger>> WebhookTriggersFromJson(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return Internal("webhook triggers are not a JSON list: " + text.substr(0, 200));
  std::vector<WebhookTrigger> out;
  for (const auto& t : j) {
    const auto bad =
        Internal("a webhook trigger is not {trigger_type, condition}: " + t.dump().substr(0, 200));
    if (!t.is_object() || !t.contains("condition") || !t["condition"].is_object()) return bad;
    auto type = ParseWebhookTriggerType(t.value("trigger_type", ""));
    if (!type) return bad;
    WebhookTrigger trigger;
    trigger.type = *type;
    if (*type == WebhookTriggerType::kExperimentStateChange) {
      auto state = ParseRunState(t["condition"].value("state", ""));
      if (!state) return bad;
      trigger.state = *state;
    } else {
      trigger.regex = t["condition"].value("regex", "");
    }
    out.push_back(std::move(trigger));
  }
  return out;
}

}  // namespace ring
