#include "master/api/commands.h"

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <regex>

#include "common/json_fields.h"

namespace ring {
namespace {

bool IsHex(const std::string& s, size_t len) {
  return s.size() == len && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool SafeRelative(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (const auto& part : std::filesystem::path(path))
    if (part == "..") return false;
  return true;
}

// Whether `j` nests deeper than `limit`, found without recursion: copying or
// writing out a value nested deeper than the stack allows would crash.
bool NestsDeeperThan(const nlohmann::json& j, int limit) {
  std::vector<std::pair<const nlohmann::json*, int>> pending{{&j, 0}};
  while (!pending.empty()) {
    const auto [value, depth] = pending.back();
    pending.pop_back();
    if (!value->is_structured()) continue;
    if (depth >= limit) return true;
    for (const auto& child : *value) pending.emplace_back(&child, depth + 1);
  }
  return false;
}

// A Unix account or group name as useradd accepts it: 1-32 of letters,
// digits, '.', '_' and '-', not starting with '-' (and an optional final '$').
bool IsUnixName(const std::string& name) {
  static const std::regex pattern("[A-Za-z0-9_.][A-Za-z0-9_.-]{0,30}[$]?|[A-Za-z0-9_.][A-Za-z0-9_.-]{0,31}");
  return std::regex_match(name, pattern);
}

Result<int64_t> UnixId(const nlohmann::json& unix, const char* name) {
  const std::string field = std::string("unix.") + name;
  if (!unix.contains(name)) return InvalidArgument(field + " is required");
  const nlohmann::json& v = unix[name];
  constexpr int64_t kMax = 4294967294;
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{kMax}) ||
      v.get<int64_t>() < 1 || v.get<int64_t>() > kMax)
    return InvalidArgument(
        field + " must be an integer from 1 to 4294967294 (tasks never run as root), got " + v.dump());
  return v.get<int64_t>();
}

Result<std::string> UnixName(const nlohmann::json& unix, const char* name) {
  const std::string field = std::string("unix.") + name;
  if (!unix.contains(name) || unix[name].is_null()) return std::string();
  if (!unix[name].is_string() ||
      (!unix[name].get<std::string>().empty() && !IsUnixName(unix[name].get<std::string>())))
    return InvalidArgument(field +
                           " must be a Unix name: up to 32 letters, digits, '.', '_' or '-', not starting "
                           "with '-'");
  return unix[name].get<std::string>();
}

// "unix": {"uid", "gid", "user", "group"} links; null unlinks.
Result<std::optional<UserUnixAccount>> DecodeUnixAccount(const nlohmann::json& unix) {
  if (unix.is_null()) return std::optional<UserUnixAccount>();
  if (!unix.is_object())
    return InvalidArgument("unix must be null or an object with uid, gid and optionally user and group");
  if (Status s = CheckKnownFields(unix, {"uid", "gid", "user", "group"}, "unix"); !s.ok()) return s;
  UserUnixAccount account;
  auto uid = UnixId(unix, "uid");
  if (!uid.ok()) return uid.status();
  auto gid = UnixId(unix, "gid");
  if (!gid.ok()) return gid.status();
  auto user = UnixName(unix, "user");
  if (!user.ok()) return user.status();
  auto group = UnixName(unix, "group");
  if (!group.ok()) return group.status();
  return std::optional<UserUnixAccount>(UserUnixAccount{*uid, *gid, *user, *group});
}

}  // namespace

Result<std::vector<MetricReport>> DecodeReports(const nlohmann::json& body, int64_t trial_id,
                                                const std::string& allocation_id) {
  if (!body.is_object() || !body.contains("reports") || !body["reports"].is_array())
    return InvalidArgument("body must be an object with a \"reports\" array");
  if (Status s = CheckKnownFields(body, {"reports"}, "the request body"); !s.ok()) return s;
  const auto& reports = body["reports"];
  if (reports.size() > 10000) return Status{ErrorCode::kTooLarge, "reports holds over 10000 entries"};
  std::vector<MetricReport> out;
  out.reserve(reports.size());
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    const std::string at = "reports[" + std::to_string(i) + "]";
    if (!r.is_object()) return InvalidArgument(at + " must be an object");
    if (Status s = CheckKnownFields(r, {"kind", "batches", "metrics"}, at); !s.ok()) return s;
    const auto kind = r.contains("kind") && r["kind"].is_string()
                          ? ParseMetricKind(r["kind"].get<std::string>())
                          : std::nullopt;
    if (!kind) return InvalidArgument(at + ".kind must be \"training\" or \"validation\"");
    if (!r.contains("batches") || !r["batches"].is_number_integer() || r["batches"].get<int64_t>() < 0)
      return InvalidArgument(at + ".batches must be a non-negative integer");
    if (!r.contains("metrics") || !r["metrics"].is_object())
      return InvalidArgument(at + ".metrics must be an object of metric names to numbers");
    for (const auto& [name, value] : r["metrics"].items())
      if (!value.is_number() && !value.is_null())
        return InvalidArgument(at + ".metrics." + name + " must be a number");
    MetricReport m;
    m.trial_id = trial_id;
    m.kind = *kind;
    m.batches = r["batches"].get<int64_t>();
    m.metrics_json = r["metrics"].dump();
    m.allocation_id = allocation_id;
    out.push_back(std::move(m));
  }
  return out;
}

Result<CheckpointRecord> DecodeCheckpoint(const nlohmann::json& body) {
  static const std::regex kUuid("^[0-9a-fA-F-]{8,64}$");
  if (Status s = CheckKnownFields(body, {"uuid", "batches", "resources", "metadata"}, "the request body");
      !s.ok())
    return s;
  if (!body.contains("uuid") || !body["uuid"].is_string() ||
      !std::regex_match(body["uuid"].get<std::string>(), kUuid))
    return InvalidArgument("uuid must be a UUID string");
  if (!body.contains("batches") || !body["batches"].is_number_integer() || body["batches"].get<int64_t>() < 0)
    return InvalidArgument("batches must be a non-negative integer");
  if (!body.contains("resources") || !body["resources"].is_array())
    return InvalidArgument("resources must be a list of {path, size, sha256}");
  if (body.contains("metadata") && !body["metadata"].is_object())
    return InvalidArgument("metadata must be an object");
  if (body.contains("metadata") && NestsDeeperThan(body["metadata"], 64))
    return InvalidArgument("metadata must not nest deeper than 64 levels");
  const auto& resources = body["resources"];
  if (resources.size() > 100000) return Status{ErrorCode::kTooLarge, "resources lists over 100000 files"};
  for (size_t i = 0; i < resources.size(); ++i) {
    const auto& r = resources[i];
    const std::string at = "resources[" + std::to_string(i) + "]";
    if (Status s = CheckKnownFields(r, {"path", "size", "sha256"}, at); !s.ok()) return s;
    if (!r.is_object() || !r.contains("path") || !r["path"].is_string() ||
        !SafeRelative(r["path"].get<std::string>()))
      return InvalidArgument(at + ".path must be a relative path inside the checkpoint");
    if (!r.contains("size") || !r["size"].is_number_integer() || r["size"].get<int64_t>() < 0)
      return InvalidArgument(at + ".size must be a non-negative integer");
    if (!r.contains("sha256") || !r["sha256"].is_string() || !IsHex(r["sha256"].get<std::string>(), 64))
      return InvalidArgument(at + ".sha256 must be 64 lower-case hex digits");
  }
  CheckpointRecord out;
  out.uuid = body["uuid"].get<std::string>();
  out.batches = body["batches"].get<int64_t>();
  out.resources.reserve(resources.size());
  for (const auto& r : resources)
    out.resources.push_back(
        {r["path"].get<std::string>(), r["size"].get<int64_t>(), r["sha256"].get<std::string>()});
  out.metadata_json = body.value("metadata", nlohmann::json::object()).dump();
  return out;
}

Result<ResourcesPatch> DecodeResourcesPatch(const nlohmann::json& patch) {
  if (!patch.is_object() || patch.empty())
    return InvalidArgument(
        "body must be an object with name, description, labels, priority, weight and/or "
        "max_slots");
  ResourcesPatch next;
  for (const auto& [key, value] : patch.items()) {
    if (key == "priority") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 99)
        return InvalidArgument("priority must be an integer from 1 to 99 (lower runs first)");
      next.priority = value.get<int64_t>();
    } else if (key == "weight") {
      if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>()))
        return InvalidArgument("weight must be a positive number");
      next.weight = value.get<double>();
    } else if (key == "max_slots") {
      next.set_max_slots = true;
      if (value.is_null()) continue;
      if (!value.is_number_integer() || value.get<int64_t>() < 1)
        return InvalidArgument("max_slots must be a positive integer, or null for no limit");
      next.max_slots = value.get<int64_t>();
    } else {
      return InvalidArgument("unknown field \"" + key +
                             "\"; use name, description, labels, priority, weight or max_slots");
    }
  }
  return next;
}

namespace {
bool HasControl(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}
}  // namespace

Result<ExperimentInfo> TakeExperimentInfo(nlohmann::json& body) {
  ExperimentInfo info;
  if (!body.is_object()) return info;
  if (auto it = body.find("name"); it != body.end()) {
    if (!it->is_string() || it->get<std::string>().empty() || it->get<std::string>().size() > 128 ||
        HasControl(it->get<std::string>()))
      return InvalidArgument("name must be a string of 1 to 128 characters without control characters");
    info.name = it->get<std::string>();
    body.erase(it);
  }
  if (auto it = body.find("description"); it != body.end()) {
    if (!it->is_string() || it->get<std::string>().size() > 4096)
      return InvalidArgument("description must be a string of at most 4096 characters");
    info.description = it->get<std::string>();
    body.erase(it);
  }
  if (auto it = body.find("labels"); it != body.end()) {
    if (!it->is_array() || it->size() > 64)
      return InvalidArgument("labels must be a list of at most 64 strings");
    std::vector<std::string> labels;
    for (const auto& l : *it) {
      if (!l.is_string() || l.get<std::string>().empty() || l.get<std::string>().size() > 128 ||
          HasControl(l.get<std::string>()))
        return InvalidArgument(
            "labels: each label must be a string of 1 to 128 characters without control "
            "characters");
      if (std::find(labels.begin(), labels.end(), l.get<std::string>()) == labels.end())
        labels.push_back(l.get<std::string>());
    }
    info.labels = std::move(labels);
    body.erase(it);
  }
  return info;
}

Result<RetentionPatch> TakeRetentionPatch(nlohmann::json& body) {
  RetentionPatch patch;
  if (!body.is_object()) return patch;
  if (auto it = body.find("checkpoint_storage"); it != body.end()) {
    if (!it->is_object())
      return InvalidArgument(
          "checkpoint_storage must be an object of save_experiment_best, save_trial_best, save_trial_latest");
    if (Status s = CheckKnownFields(*it, {"save_experiment_best", "save_trial_best", "save_trial_latest"},
                                    "checkpoint_storage");
        !s.ok())
      return s;
    for (auto [key, field] : {std::pair{"save_experiment_best", &patch.save_experiment_best},
                              std::pair{"save_trial_best", &patch.save_trial_best},
                              std::pair{"save_trial_latest", &patch.save_trial_latest}}) {
      auto v = it->find(key);
      if (v == it->end()) continue;
      if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 1000000)
        return InvalidArgument(std::string("checkpoint_storage.") + key + " must be an integer >= 0");
      *field = v->get<int64_t>();
    }
    body.erase(it);
  }
  if (auto it = body.find("log_retention_days"); it != body.end()) {
    if (it->is_null()) {
      patch.log_retention_days = std::optional<int64_t>();
    } else {
      if (!it->is_number_integer() || it->get<int64_t>() < -1 || it->get<int64_t>() > 32767)
        return InvalidArgument(
            "log_retention_days must be a number of days from 0 to 32767, -1 to keep logs, or null for the "
            "master's retention.log_retention_days");
      patch.log_retention_days = std::optional<int64_t>(it->get<int64_t>());
    }
    body.erase(it);
  }
  return patch;
}

Result<OperationCompletion> DecodeCompletion(const nlohmann::json& body) {
  if (!body.is_object()) return InvalidArgument("body must be an object {\"length\": N, \"metric\": value}");
  if (Status s = CheckKnownFields(body, {"length", "metric"}, "the request body"); !s.ok()) return s;
  if (!body.contains("length") || !body["length"].is_number_integer() || body["length"].get<int64_t>() < 1)
    return InvalidArgument("length must be a positive integer (the operation's batches)");
  if (!body.contains("metric") || !body["metric"].is_number() || !std::isfinite(body["metric"].get<double>()))
    return InvalidArgument("metric must be a finite number (the searcher metric)");
  return OperationCompletion{body["length"].get<int64_t>(), body["metric"].get<double>()};
}

Result<std::string> DecodeInvalidHparams(const nlohmann::json& body) {
  if (!body.is_object() || (body.contains("message") && !body["message"].is_string()))
    return InvalidArgument("body must be an object {\"message\": \"what is wrong\"}");
  if (Status s = CheckKnownFields(body, {"message"}, "the request body"); !s.ok()) return s;
  std::string message = body.value("message", "");
  if (message.size() > 4096) message.resize(4096);
  if (message.empty()) message = "no reason given";
  return message;
}

Result<UserRole> DecodeRole(const nlohmann::json& body) {
  if (!body.is_object() || !body.contains("role")) return UserRole::kUser;
  const nlohmann::json& role = body["role"];
  const std::optional<UserRole> parsed =
      role.is_string() ? ParseUserRole(role.get<std::string>()) : std::optional<UserRole>();
  if (!parsed) return InvalidArgument("role must be \"admin\" or \"user\"");
  return *parsed;
}

Result<UserPatch> DecodeUserPatch(const nlohmann::json& body) {
  if (!body.is_object() || body.empty())
    return InvalidArgument("the request body must be an object with password, role, active or unix");
  if (Status s = CheckKnownFields(body, {"password", "current_password", "role", "active", "unix"},
                                  "the request body");
      !s.ok())
    return s;
  UserPatch patch;
  if (body.contains("role")) {
    auto role = DecodeRole(body);
    if (!role.ok()) return role.status();
    patch.role = *role;
  }
  if (body.contains("active")) {
    if (!body["active"].is_boolean()) return InvalidArgument("active must be true or false");
    patch.active = body["active"].get<bool>();
  }
  if (body.contains("password")) {
    if (!body["password"].is_string()) return InvalidArgument("password must be a string");
    patch.password = body["password"].get<std::string>();
  }
  if (body.contains("current_password")) {
    if (!body["current_password"].is_string()) return InvalidArgument("current_password must be a string");
    patch.current_password = body["current_password"].get<std::string>();
  }
  if (body.contains("unix")) {
    auto account = DecodeUnixAccount(body["unix"]);
    if (!account.ok()) return account.status();
    patch.unix_account = *account;
  }
  return patch;
}

}  // namespace ring
