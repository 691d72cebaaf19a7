// MemoryStore: config templates.
#include "master/store/memory_store.h"
#include "master/store/store_util.h"

namespace ring {

Status MemoryStore::SetTemplate(const TemplateRecord& t) {
  std::lock_guard lock(mu_);
  const std::string now = NowRfc3339();
  auto [it, created] = templates_.try_emplace(t.name, t);
  if (created) {
    it->second.created_at = now;
  } else {
    it->second.config_yaml = t.config_yaml;
  }
  it->second.updated_at = now;
  return Status::Ok();
}

Result<TemplateRecord> MemoryStore::GetTemplate(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = templates_.find(name);
  if (it == templates_.end()) return NotFound("template \"" + name + "\" not found");
  return it->second;
}

Result<std::vector<TemplateRecord>> MemoryStore::ListTemplates() {
  std::lock_guard lock(mu_);
  std::vector<TemplateRecord> out;
  for (const auto& [name, t] : templates_) out.push_back(t);
  return out;
}

Status MemoryStore::DeleteTemplate(const std::string& name) {
  std::lock_guard lock(mu_);
  if (templates_.erase(name) == 0) return NotFound("template \"" + name + "\" not found");
  return Status::Ok();
}

}  // namespace ring
