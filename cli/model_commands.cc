#include "cli/model_commands.h"

#include <CLI/CLI.hpp>

#include "cli/checkpoint_commands.h"
#include "cli/format.h"
#include "cli/table.h"

namespace ring::cli {
namespace {

std::string ModelPath(const std::string& name) {
  return "/api/v1/models/" + PercentEncode(name);
}

std::string Joined(const nlohmann::json& list) {
  std::string out;
  if (list.is_array())
    for (const auto& l : list)
      if (l.is_string()) out += (out.empty() ? "" : ", ") + l.get<std::string>();
  return out.empty() ? "-" : out;
}

// --metadata key=value: the value as JSON when it is a number, true, false
// or null, else as text.
Result<nlohmann::json> MetadataOf(const std::vector<std::string>& pairs) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& pair : pairs) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidArgument("--metadata takes key=value, got \"" + pair + "\"");
    const std::string value = pair.substr(eq + 1);
    auto parsed = nlohmann::json::parse(value, nullptr, false);
    out[pair.substr(0, eq)] = parsed.is_discarded() || parsed.is_structured() || parsed.is_string()
                                  ? nlohmann::json(value)
                                  : parsed;
  }
  return out;
}

int Print(CliEnv& env, const Result<nlohmann::json>& res, const std::string& said) {
  if (!res.ok()) return env.Fail(res.status());
  if (env.json)
    env.out << res->dump(2) << '\n';
  else
    env.out << said << '\n';
  return kExitOk;
}

void PrintVersions(CliEnv& env, const nlohmann::json& versions) {
  if (!versions.is_array() || versions.empty()) {
    env.out << "No versions.\n";
    return;
  }
  Table table({"version", "name", "checkpoint", "experiment", "trial", "batches", "state", "by", "created"});
  for (const auto& v : versions) {
    const auto& c = Member(v, "checkpoint");
    table.AddRow({Field(v, "version"), GetString(v, "name").empty() ? "-" : Field(v, "name"),
                  Field(v, "checkpoint_uuid"), Field(c, "experiment_id"), Field(c, "trial_id"),
                  Field(c, "batches"), Field(c, "state"), Field(v, "created_by"), Field(v, "created_at")});
  }
  table.Print(env.out);
}

}  // namespace

int CreateModel(CliEnv& env, const ModelArgs& a) {
  nlohmann::json body{{"name", a.name}};
  if (!a.description.empty()) body["description"] = a.description;
  if (!a.labels.empty()) body["labels"] = a.labels;
  return Print(env, env.master.Post("/api/v1/models", body), "Model " + a.name + " created");
}

int ListModels(CliEnv& env, const ModelArgs& a) {
  std::string query = "?limit=1000";
  if (!a.label.empty()) query += "&label=" + PercentEncode(a.label);
  if (!a.archived.empty()) query += "&archived=" + a.archived;
  auto res = env.master.Get("/api/v1/models" + query);
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& list = Member(*res, "models");
  if (!list.is_array() || list.empty()) {
    env.out << "No models.\n";
    return kExitOk;
  }
  Table table({"name", "versions", "owner", "labels", "archived", "description"});
  for (const auto& m : list)
    table.AddRow({Field(m, "name"), Field(m, "num_versions"), Field(m, "owner"), Joined(Member(m, "labels")),
                  Field(m, "archived"), Field(m, "description")});
  table.Print(env.out);
  return kExitOk;
}

int DescribeModel(CliEnv& env, const std::string& name) {
  auto res = env.master.Get(ModelPath(name) + "/versions");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  const auto& m = Member(*res, "model");
  env.out << "Model:       " << Field(m, "name")
          << (m.is_object() && m.value("archived", false) ? " (archived)" : "") << '\n'
          << "Owner:       " << Field(m, "owner") << '\n'
          << "Description: " << (GetString(m, "description").empty() ? "-" : Field(m, "description")) << '\n'
          << "Labels:      " << Joined(Member(m, "labels")) << '\n'
          << "Created:     " << Field(m, "created_at") << "\n\n";
  PrintVersions(env, Member(*res, "versions"));
  return kExitOk;
}

int SetModelArchived(CliEnv& env, const std::string& name, bool archived) {
  return Print(env, env.master.Patch(ModelPath(name), {{"archived", archived}}),
               "Model " + name + (archived ? " archived" : " unarchived"));
}

int RegisterModelVersion(CliEnv& env, const ModelArgs& a) {
  auto metadata = MetadataOf(a.metadata);
  if (!metadata.ok()) return env.Fail(metadata.status());
  nlohmann::json body{{"checkpoint_uuid", a.uuid}};
  if (!a.version_name.empty()) body["name"] = a.version_name;
  if (!a.notes.empty()) body["notes"] = a.notes;
  if (!metadata->empty()) body["metadata"] = *metadata;
  auto res = env.master.Post(ModelPath(a.name) + "/versions", body);
  if (!res.ok()) return env.Fail(res.status());
  return Print(
      env, res,
      "Registered checkpoint " + a.uuid + " as version " + Field(*res, "version") + " of model " + a.name);
}

int DeleteModelVersion(CliEnv& env, const std::string& name, int64_t version) {
  return Print(env, env.master.Delete(ModelPath(name) + "/versions/" + std::to_string(version)),
               "Version " + std::to_string(version) + " of model " + name + " deleted");
}

int DownloadModel(CliEnv& env, const ModelArgs& a) {
  nlohmann::json version;
  if (a.version > 0) {
    auto res = env.master.Get(ModelPath(a.name) + "/versions/" + std::to_string(a.version));
    if (!res.ok()) return env.Fail(res.status());
    version = *res;
  } else {
    auto res = env.master.Get(ModelPath(a.name) + "/versions");
    if (!res.ok()) return env.Fail(res.status());
    const auto& versions = Member(*res, "versions");
    if (!versions.is_array() || versions.empty())
      return env.Fail(NotFound("model " + a.name + " has no versions (ring model register-version)"));
    version = versions.back();  // by version: the latest last
  }
  const std::string uuid = GetString(version, "checkpoint_uuid");
  if (!env.json)
    env.out << "Model " << a.name << " version " << Field(version, "version") << ": checkpoint " << uuid
            << '\n';
  return DownloadCheckpoint(env, uuid, a.dir);
}

int DeleteModel(CliEnv& env, const std::string& name, bool yes) {
  if (!yes) {
    auto m = env.master.Get(ModelPath(name));
    if (!m.ok()) return env.Fail(m.status());
    if (const int64_t n = GetInt(*m, "num_versions"); n > 0)
      return env.Fail(
          InvalidArgument("model " + name + " has " + std::to_string(n) +
                          " versions, deleted with it (their checkpoints are then garbage collected "
                          "as their experiments' policies say); pass --yes"));
  }
  return Print(env, env.master.Delete(ModelPath(name)), "Model " + name + " deleted");
}

void AddModelCommands(CLI::App& app, ModelArgs& a, std::function<int(CliEnv&)>& action) {
  auto* model =
      app.add_subcommand("model", "The model registry: named models whose versions are checkpoints");
  model->require_subcommand(1);
  auto name_arg = [&](CLI::App* cmd) { cmd->add_option("NAME", a.name, "Model name")->required(); };
  auto* create = model->add_subcommand("create", "Create a model (A-Z a-z 0-9 . _ -; yours)");
  name_arg(create);
  create->add_option("--description", a.description, "What it is");
  create->add_option("--label", a.labels, "A label (repeat for more)");
  create->callback([&] { action = [&](CliEnv& env) { return CreateModel(env, a); }; });
  auto* list = model->add_subcommand("list", "List models by name");
  list->add_option("--label", a.label, "Only models with this label");
  list->add_option("--archived", a.archived, "Only archived (true) or unarchived (false) models")
      ->check(CLI::IsMember({"true", "false"}));
  list->callback([&] { action = [&](CliEnv& env) { return ListModels(env, a); }; });
  auto* describe = model->add_subcommand("describe", "Show a model and its versions");
  name_arg(describe);
  describe->callback([&] { action = [&](CliEnv& env) { return DescribeModel(env, a.name); }; });
  for (const bool archive : {true, false}) {
    auto* cmd =
        model->add_subcommand(archive ? "archive" : "unarchive",
                              archive ? "Archive a model: no new versions, no changes" : "Unarchive a model");
    name_arg(cmd);
    cmd->callback([&, archive] {
      action = [&, archive](CliEnv& env) { return SetModelArchived(env, a.name, archive); };
    });
  }
  auto* reg = model->add_subcommand(
      "register-version", "Register a checkpoint as the model's next version (kept from garbage collection)");
  name_arg(reg);
  reg->add_option("CHECKPOINT_UUID", a.uuid, "An ACTIVE checkpoint (ring checkpoint list EXP_ID)")
      ->required();
  reg->add_option("--name", a.version_name, "The version's name");
  reg->add_option("--notes", a.notes, "Notes (text)");
  reg->add_option("--metadata", a.metadata, "key=value (repeat for more); numbers and true/false stay typed");
  reg->callback([&] { action = [&](CliEnv& env) { return RegisterModelVersion(env, a); }; });
  auto* del_version = model->add_subcommand(
      "delete-version",
      "Delete a version; its checkpoint is garbage collected as its experiment's policy says");
  name_arg(del_version);
  del_version->add_option("VERSION", a.version, "Version number")->required()->check(CLI::PositiveNumber);
  del_version->callback(
      [&] { action = [&](CliEnv& env) { return DeleteModelVersion(env, a.name, a.version); }; });
  auto* download = model->add_subcommand("download", "Download a version's checkpoint files into DIR");
  name_arg(download);
  download->add_option("DIR", a.dir, "Folder to write the files into (created if missing)")->required();
  download->add_option("--version", a.version, "Version number (default: the latest)")
      ->check(CLI::PositiveNumber);
  download->callback([&] { action = [&](CliEnv& env) { return DownloadModel(env, a); }; });
  auto* del = model->add_subcommand("delete", "Delete a model and its versions (its owner or an admin)");
  name_arg(del);
  del->add_flag("-y,--yes", a.yes, "Delete it even when it has versions");
  del->callback([&] { action = [&](CliEnv& env) { return DeleteModel(env, a.name, a.yes); }; });
}

}  // namespace ring::cli
