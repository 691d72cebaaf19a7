#include "master/api/model_requests.h"

#include <algorithm>
#include <cctype>

#include "common/json_fields.h"

namespace ring {
namespace {

constexpr size_t kMaxDescription = 4096;
constexpr size_t kMaxNotes = 64 * 1024;
constexpr size_t kMaxMetadata = 64 * 1024;

bool HasControlCharacter(const std::string& text, bool allow_newlines) {
  for (unsigned char c : text)
    if ((c < 0x20 && !(allow_newlines && (c == '\n' || c == '\t' || c == '\r'))) || c == 0x7f) return true;
  return false;
}

Result<std::string> TextField(const nlohmann::json& value, const std::string& field, size_t max,
                              bool multiline) {
  if (!value.is_string() || value.get<std::string>().size() > max ||
      HasControlCharacter(value.get<std::string>(), multiline))
    return InvalidArgument(field + " must be a string of at most " + std::to_string(max) + " characters" +
                           (multiline ? "" : " without control characters"));
  return value.get<std::string>();
}

// At most 64 distinct labels of 1 to 128 characters, without control
// characters; repeats are dropped.
Result<std::vector<std::string>> Labels(const nlohmann::json& value) {
  if (!value.is_array() || value.size() > 64)
    return InvalidArgument("labels must be a list of at most 64 strings");
  std::vector<std::string> labels;
  for (const auto& l : value) {
    if (!l.is_string() || l.get<std::string>().empty() || l.get<std::string>().size() > 128 ||
        HasControlCharacter(l.get<std::string>(), false))
      return InvalidArgument(
          "labels: each label must be a string of 1 to 128 characters without control characters");
    if (std::find(labels.begin(), labels.end(), l.get<std::string>()) == labels.end())
      labels.push_back(l.get<std::string>());
  }
  return labels;
}

Result<std::string> Metadata(const nlohmann::json& value) {
  if (!value.is_object()) return InvalidArgument("metadata must be a JSON object");
  std::string text = value.dump();
  if (text.size() > kMaxMetadata)
    return InvalidArgument("metadata must be at most " + std::to_string(kMaxMetadata) + " bytes of JSON");
  return text;
}

Status RequireObject(const nlohmann::json& body) {
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  return Status::Ok();
}

}  // namespace

Status CheckModelName(const std::string& name) {
  const std::string rule = "name must be 1 to 128 characters of A-Z a-z 0-9 . _ -, not digits only";
  if (name.empty() || name.size() > 128) return InvalidArgument(rule);
  bool digits_only = true;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '.' && c != '_' && c != '-')
      return InvalidArgument(rule + ", got \"" + name.substr(0, 160) + "\"");
    digits_only = digits_only && std::isdigit(u);
  }
  if (digits_only) return InvalidArgument(rule + ", got \"" + name + "\"");
  return Status::Ok();
}

Result<ModelRecord> DecodeNewModel(const nlohmann::json& body) {
  if (Status s = RequireObject(body); !s.ok()) return s;
  if (Status s = CheckKnownFields(body, {"name", "description", "labels"}, "the request body"); !s.ok())
    return s;
  if (!body.contains("name") || !body["name"].is_string())
    return InvalidArgument("name is required: the model's name (A-Z a-z 0-9 . _ -)");
  ModelRecord m;
  m.name = body["name"].get<std::string>();
  if (Status s = CheckModelName(m.name); !s.ok()) return s;
  if (body.contains("description")) {
    auto d = TextField(body["description"], "description", kMaxDescription, true);
    if (!d.ok()) return d.status();
    m.description = *d;
  }
  if (body.contains("labels")) {
    auto l = Labels(body["labels"]);
    if (!l.ok()) return l.status();
    m.labels = *l;
  }
  return m;
}

Result<ModelUpdate> DecodeModelUpdate(const nlohmann::json& body) {
  if (Status s = RequireObject(body); !s.ok()) return s;
  if (Status s = CheckKnownFields(body, {"description", "labels", "archived"}, "the request body"); !s.ok())
    return s;
  ModelUpdate u;
  if (body.contains("description")) {
    auto d = TextField(body["description"], "description", kMaxDescription, true);
    if (!d.ok()) return d.status();
    u.description = *d;
  }
  if (body.contains("labels")) {
    auto l = Labels(body["labels"]);
    if (!l.ok()) return l.status();
    u.labels = *l;
  }
  if (body.contains("archived")) {
    if (!body["archived"].is_boolean()) return InvalidArgument("archived must be true or false");
    u.archived = body["archived"].get<bool>();
  }
  return u;
}

Result<ModelVersionRecord> DecodeNewModelVersion(const nlohmann::json& body) {
  if (Status s = RequireObject(body); !s.ok()) return s;
  if (Status s = CheckKnownFields(body, {"checkpoint_uuid", "name", "notes", "metadata", "labels"},
                                  "the request body");
      !s.ok())
    return s;
  if (!body.contains("checkpoint_uuid") || !body["checkpoint_uuid"].is_string() ||
      body["checkpoint_uuid"].get<std::string>().empty() ||
      body["checkpoint_uuid"].get<std::string>().size() > 64)
    return InvalidArgument("checkpoint_uuid is required: the uuid of a registered checkpoint");
  nlohmann::json rest = body;
  rest.erase("checkpoint_uuid");
  auto update = DecodeModelVersionUpdate(rest);
  if (!update.ok()) return update.status();
  ModelVersionRecord v;
  v.checkpoint_uuid = body["checkpoint_uuid"].get<std::string>();
  v.name = update->name.value_or("");
  v.notes = update->notes.value_or("");
  v.metadata_json = update->metadata_json.value_or("{}");
  v.labels = update->labels.value_or(std::vector<std::string>{});
  return v;
}

Result<ModelVersionUpdate> DecodeModelVersionUpdate(const nlohmann::json& body) {
  if (Status s = RequireObject(body); !s.ok()) return s;
  if (Status s = CheckKnownFields(body, {"name", "notes", "metadata", "labels"}, "the request body"); !s.ok())
    return s;
  ModelVersionUpdate u;
  if (body.contains("name")) {
    auto n = TextField(body["name"], "name", 128, false);
    if (!n.ok()) return n.status();
    u.name = *n;
  }
  if (body.contains("notes")) {
    auto n = TextField(body["notes"], "notes", kMaxNotes, true);
    if (!n.ok()) return n.status();
    u.notes = *n;
  }
  if (body.contains("metadata")) {
    auto m = Metadata(body["metadata"]);
    if (!m.ok()) return m.status();
    u.metadata_json = *m;
  }
  if (body.contains("labels")) {
    auto l = Labels(body["labels"]);
    if (!l.ok()) return l.status();
    u.labels = *l;
  }
  return u;
}

Result<int64_t> ParseModelVersion(const std::string& text) {
  int64_t n = 0;
  bool ok = !text.empty() && text.size() <= 12;
  for (char c : text) {
    ok = ok && std::isdigit(static_cast<unsigned char>(c));
    if (ok) n = n * 10 + (c - '0');
  }
  if (!ok || n < 1)
    return InvalidArgument("version must be a positive integer, got \"" + text.substr(0, 32) + "\"");
  return n;
}

nlohmann::json ModelJson(const ModelRecord& m) {
  return {{"name", m.name},
          {"description", m.description},
          {"labels", m.labels},
          {"owner", m.owner},
          {"archived", m.archived},
          {"num_versions", m.num_versions},
          {"created_at", m.created_at},
          {"updated_at", m.updated_at}};
}

nlohmann::json ModelVersionJson(const ModelVersionRecord& v, const nlohmann::json& checkpoint) {
  auto metadata = nlohmann::json::parse(v.metadata_json, nullptr, false);
  if (!metadata.is_object()) metadata = nlohmann::json::object();
  return {{"model", v.model},
          {"version", v.version},
          {"checkpoint_uuid", v.checkpoint_uuid},
          {"checkpoint", checkpoint},
          {"name", v.name},
          {"notes", v.notes},
          {"metadata", std::move(metadata)},
          {"labels", v.labels},
          {"created_by", v.created_by},
          {"created_at", v.created_at},
          {"updated_at", v.updated_at}};
}

}  // namespace ring
