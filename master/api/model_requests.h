#pragma once
// The model registry's request bodies (docs/rest.md "Models") decoded into
// store records, each refusal naming its field, and the records as the API
// answers them. Pure functions, any thread.
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "master/store/store.h"

namespace ring {

// A model's name: 1 to 128 characters of A-Z a-z 0-9 . _ -, not digits only
// (as Determined, so that a number can never be mistaken for one).
Status CheckModelName(const std::string& name);
// POST /models: {name, description?, labels?}; the owner is the caller's.
Result<ModelRecord> DecodeNewModel(const nlohmann::json& body);
// PATCH /models/{name}: any of description, labels, archived.
Result<ModelUpdate> DecodeModelUpdate(const nlohmann::json& body);
// POST /models/{name}/versions: {checkpoint_uuid, name?, notes?, metadata?, labels?}.
Result<ModelVersionRecord> DecodeNewModelVersion(const nlohmann::json& body);
// PATCH /models/{name}/versions/{version}: any of name, notes, metadata, labels.
Result<ModelVersionUpdate> DecodeModelVersionUpdate(const nlohmann::json& body);
// The {version} of a path: a positive integer.
Result<int64_t> ParseModelVersion(const std::string& text);

// The answers' shapes (docs/openapi.json Model and ModelVersion).
nlohmann::json ModelJson(const ModelRecord& m);
// `checkpoint` is the version's checkpoint with where it came from, or null
// when it cannot be read.
nlohmann::json ModelVersionJson(const ModelVersionRecord& v, const nlohmann::json& checkpoint);

}  // namespace ring
