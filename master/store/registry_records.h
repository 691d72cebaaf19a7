#pragma once
// Config templates and the model registry (models and their versions) as
// the store keeps them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ring {

// A named partial experiment config (ring template set).
struct TemplateRecord {
  std::string name;
  std::string config_yaml;
  std::string owner;       // who set it first
  std::string created_at;  // set by the store
  std::string updated_at;  // set by the store
};

// A named model of the registry (ring model create). Its versions are
// registered checkpoints (ModelVersionRecord).
struct ModelRecord {
  int64_t id = 0;  // set by the store
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  std::string owner;  // who created it
  bool archived = false;
  std::string created_at;    // set by the store
  std::string updated_at;    // set by the store
  int64_t num_versions = 0;  // read only: its versions now
  int64_t last_version = 0;  // read only: the highest number it ever gave
};

// What PATCH /models/{name} changes; each absent field stays as it is.
struct ModelUpdate {
  std::optional<std::string> description;
  std::optional<std::vector<std::string>> labels;
  std::optional<bool> archived;
};

// One version of a model: a registered checkpoint with its own name, notes,
// metadata (a JSON object, passed through unread) and labels.
struct ModelVersionRecord {
  std::string model;    // the model's name
  int64_t version = 0;  // set by the store: 1, 2, ... per model, never given twice
  std::string checkpoint_uuid;
  std::string name;
  std::string notes;
  std::string metadata_json = "{}";
  std::vector<std::string> labels;
  std::string created_by;
  std::string created_at;  // set by the store
  std::string updated_at;  // set by the store
};

// What PATCH /models/{name}/versions/{version} changes.
struct ModelVersionUpdate {
  std::optional<std::string> name;
  std::optional<std::string> notes;
  std::optional<std::string> metadata_json;
  std::optional<std::vector<std::string>> labels;
};

}  // namespace ring
