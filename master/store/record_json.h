#pragma once
// The JSON text some typed record fields are kept as in SQLite: a
// checkpoint's storage and file list, an allocation's placements, an agent's
// slots. Only the
// store reads or writes it.
#include <string>
#include <vector>

#include "common/status.h"
#include "master/store/store.h"

namespace ring {

std::string StorageJson(const CheckpointStorage& storage);  // {"type","host_path","storage_path"}
Result<CheckpointStorage> StorageFromJson(const std::string& text);
std::string FilesJson(const std::vector<CheckpointFile>& files);  // [{"path","size","sha256"}]
Result<std::vector<CheckpointFile>> FilesFromJson(const std::string& text);
std::string PlacementsJson(const std::vector<Placement>& placements);  // [{"agent_id","slot_ids"}]
Result<std::vector<Placement>> PlacementsFromJson(const std::string& text);
std::string SlotsJson(const std::vector<proto::Slot>& slots);  // [{"id","type","uuid"}]
Result<std::vector<proto::Slot>> SlotsFromJson(const std::string& text);
std::string TaskSpecJson(const TaskSpec& spec);  // every field of TaskSpec
Result<TaskSpec> TaskSpecFromJson(const std::string& text);
// [{"trigger_type", "condition": {"state"} or {"regex"}}]
std::string WebhookTriggersJson(const std::vector<WebhookTrigger>& triggers);
Result<std::vector<WebhookTrigger>> WebhookTriggersFromJson(const std::string& text);

}  // namespace ring
