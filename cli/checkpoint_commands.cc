#include "cli/checkpoint_commands.h"

#include <filesystem>

#include "cli/format.h"
#include "cli/table.h"
#include "common/archive.h"

namespace ring::cli {

int ListCheckpoints(CliEnv& env, int64_t experiment_id) {
  auto res = env.master.Get("/api/v1/experiments/" + std::to_string(experiment_id) + "/checkpoints");
  if (!res.ok()) return env.Fail(res.status());
  if (env.json) {
    env.out << res->dump(2) << '\n';
    return kExitOk;
  }
  Table table({"uuid", "trial", "batches", "state", "size", "validation", "created"});
  const auto& list = Member(*res, "checkpoints");
  if (list.is_array()) {
    for (const auto& c : list) {
      uint64_t bytes = 0;
      const auto& files = Member(c, "resources");
      if (files.is_array())
        for (const auto& f : files) bytes += f.value("size", uint64_t{0});
      table.AddRow({Field(c, "uuid"), Field(c, "trial_id"), Field(c, "batches"), Field(c, "state"),
                    FormatBytes(bytes), Field(c, "validation_metric"), Field(c, "created_at")});
    }
  }
  table.Print(env.out);
  return kExitOk;
}

int DownloadCheckpoint(CliEnv& env, const std::string& uuid, const std::string& dir) {
  auto tar = env.master.GetBytes("/api/v1/checkpoints/" + PercentEncode(uuid) + "/download");
  if (!tar.ok()) return env.Fail(tar.status());
  UnpackLimits limits;
  limits.max_total_bytes = 64ull << 30;
  limits.max_files = 1000000;
  if (Status s = UnpackArchive(*tar, dir, limits); !s.ok()) return env.Fail(s);
  std::error_code ec;
  env.out << "Checkpoint " << uuid << " downloaded to " << std::filesystem::absolute(dir, ec).string()
          << '\n';
  return kExitOk;
}

}  // namespace ring::cli
