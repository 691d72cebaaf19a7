#include "cli/checkpoint_commands.h"

#include <cctype>
#include <filesystem>

#include "cli/format.h"
#include "cli/table.h"
#include "common/archive.h"

namespace ring::cli {
namespace {

constexpr int64_t kPageSize = 500;
constexpr int64_t kMaxPages = 1000;

// Every checkpoint of an experiment (follows the pages when the master pages).
Result<nlohmann::json> FetchAllCheckpoints(MasterClient& master, int64_t experiment_id) {
  nlohmann::json all = nlohmann::json::array();
  for (int64_t page = 0; page < kMaxPages; ++page) {
    auto res = master.Get("/api/v1/experiments/" + std::to_string(experiment_id) +
                          "/checkpoints?limit=" + std::to_string(kPageSize) +
                          "&offset=" + std::to_string(all.size()));  // the master may page by less
    if (!res.ok()) return res.status();
    const auto& list = Member(*res, "checkpoints");
    if (!list.is_array()) return Internal("the master's checkpoint list has no \"checkpoints\" array");
    for (const auto& c : list) all.push_back(c);
    const int64_t total = GetInt(*res, "total", static_cast<int64_t>(all.size()));
    if (list.empty() || static_cast<int64_t>(all.size()) >= total) break;
  }
  return all;
}

uint64_t TotalSize(const nlohmann::json& checkpoint) {
  uint64_t bytes = 0;
  const auto& files = Member(checkpoint, "resources");
  if (files.is_array())
    for (const auto& f : files)
      if (f.is_object() && f.contains("size") && f["size"].is_number_unsigned())
        bytes += f["size"].get<uint64_t>();
  return bytes;
}

}  // namespace

int ListCheckpoints(CliEnv& env, int64_t experiment_id) {
  auto list = FetchAllCheckpoints(env.master, experiment_id);
  if (!list.ok()) return env.Fail(list.status());
  if (env.json) {
    env.out << nlohmann::json{{"checkpoints", *list}, {"total", list->size()}}.dump(2) << '\n';
    return kExitOk;
  }
  if (list->empty()) {
    env.out << "Experiment " << experiment_id << " has no checkpoints.\n";
    return kExitOk;
  }
  Table table({"uuid", "trial", "batches", "state", "size", "validation metric", "created"});
  for (const auto& c : *list) {
    table.AddRow({Field(c, "uuid"), Field(c, "trial_id"), Field(c, "batches"), Field(c, "state"),
                  FormatBytes(TotalSize(c)), Field(c, "validation_metric"), Field(c, "created_at")});
  }
  table.Print(env.out);
  return kExitOk;
}

namespace {

// Unpacks a downloaded tar.gz into `dir` and says where: {"<key>": id, "path"} with --json.
int UnpackDownload(CliEnv& env, const std::string& tar, const std::string& dir, const UnpackLimits& limits,
                   const std::string& what, const nlohmann::json& key) {
  if (Status s = UnpackArchive(tar, dir, limits); !s.ok())
    return env.Fail(Status(s.code(), "cannot unpack " + what + " into " + dir + ": " + s.message()));
  std::error_code ec;
  const std::string path = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (env.json) {
    nlohmann::json out = key;
    out["path"] = path;
    env.out << out.dump() << '\n';
  } else {
    std::string said = what;
    said[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(said[0])));
    env.out << said << " downloaded to " << path << '\n';
  }
  return kExitOk;
}

}  // namespace

int DownloadCheckpoint(CliEnv& env, const std::string& uuid, const std::string& dir) {
  auto tar = env.master.GetBytes("/api/v1/checkpoints/" + PercentEncode(uuid) + "/download");
  if (!tar.ok()) {
    Status s = tar.status();
    if (s.code() == ErrorCode::kNotFound)
      return env.Fail(Status(s.code(), "checkpoint " + uuid + " not found: " + s.message() +
                                           " (see ring checkpoint list EXP_ID)"));
    if (s.code() == ErrorCode::kConflict)
      return env.Fail(Status(s.code(), "checkpoint " + uuid + " cannot be downloaded: " + s.message()));
    return env.Fail(s);
  }
  UnpackLimits limits;
  limits.max_total_bytes = 64ull << 30;
  limits.max_files = 1000000;
  return UnpackDownload(env, *tar, dir, limits, "checkpoint " + uuid, {{"uuid", uuid}});
}

int DownloadModelDefinition(CliEnv& env, int64_t experiment_id, const std::string& dir) {
  const std::string id = std::to_string(experiment_id);
  auto tar = env.master.GetBytes("/api/v1/experiments/" + id + "/model_definition");
  if (!tar.ok()) {
    Status s = tar.status();
    if (s.code() == ErrorCode::kNotFound)
      return env.Fail(Status(s.code(), "experiment " + id + " not found (see ring experiment list)"));
    return env.Fail(s);
  }
  // What the master accepted at submit: within the archive limits it checks.
  return UnpackDownload(env, *tar, dir, UnpackLimits{}, "the model definition of experiment " + id,
                        {{"experiment_id", experiment_id}});
}

}  // namespace ring::cli
