#include "slurm_submit/submit_config.h"

#include <sys/stat.h>

#include <filesystem>

#include <yaml-cpp/yaml.h>

namespace ring::submit {

Status CheckOnlyRootCanChange(const std::string& path) {
  if (path.empty() || path.front() != '/')
    return InvalidArgument(path + ": the settings file needs an absolute path");
  std::filesystem::path at;
  for (const auto& part : std::filesystem::path(path)) {
    at /= part;
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) return NotFound(at.string() + " does not exist");
    if (S_ISLNK(st.st_mode)) return Status(ErrorCode::kPermissionDenied, at.string() + " is a symbolic link");
    const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
    if (st.st_uid != 0)
      return Status(ErrorCode::kPermissionDenied,
                    at.string() + " is not owned by root, so root alone cannot change it");
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(sticky_dir && at.string() != path))
      return Status(ErrorCode::kPermissionDenied,
                    at.string() + " is writable by its group or others, so root alone cannot change it");
  }
  return Status::Ok();
}

Result<SubmitConfig> LoadSubmitConfig(const std::string& path) {
  if (Status s = CheckOnlyRootCanChange(path); !s.ok()) return s;
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
  if (!doc.IsMap()) return InvalidArgument(path + ": must be a map of settings");
  SubmitConfig c;
  auto at = [&](const YAML::Node& n) { return path + ":" + std::to_string(n.Mark().line + 1) + ": "; };
  for (const auto& kv : doc) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "min_uid") {
      try {
        c.min_uid = v.as<int64_t>();
      } catch (const YAML::Exception&) {
        return InvalidArgument(at(v) + "min_uid must be an integer");
      }
      if (c.min_uid < 1) return InvalidArgument(at(v) + "min_uid must be at least 1: no job runs as root");
      continue;
    }
    std::string* field = key == "master_user"        ? &c.master_user
                         : key == "master_url"       ? &c.master_url
                         : key == "ca_file"          ? &c.ca_file
                         : key == "agent_binary"     ? &c.agent_binary
                         : key == "agent_master_url" ? &c.agent_master_url
                         : key == "agent_ca_file"    ? &c.agent_ca_file
                         : key == "job_dir"          ? &c.job_dir
                         : key == "slurm_conf"       ? &c.slurm_conf
                         : key == "slurm_bin_dir"    ? &c.slurm_bin_dir
                                                     : nullptr;
    if (!field) return InvalidArgument(at(kv.first) + "unknown key \"" + key + "\"");
    if (!v.IsScalar() || v.as<std::string>().empty())
      return InvalidArgument(at(v) + key + " must be a non-empty string");
    *field = v.as<std::string>();
    if (key != "master_user" && key != "master_url" && key != "agent_master_url" && field->front() != '/')
      return InvalidArgument(at(v) + key + " must be an absolute path");
  }
  for (auto [key, value] : {std::pair{"master_user", &c.master_user}, std::pair{"master_url", &c.master_url},
                            std::pair{"agent_binary", &c.agent_binary}, std::pair{"job_dir", &c.job_dir}})
    if (value->empty()) return InvalidArgument(path + ": " + key + " is required");
  if (c.agent_master_url.empty()) c.agent_master_url = c.master_url;
  // Job folders are made there as root: nobody else may plant links in it.
  if (Status s = CheckOnlyRootCanChange(c.job_dir); !s.ok())
    return InvalidArgument(path + ": job_dir: " + s.message());
  return c;
}

}  // namespace ring::submit
