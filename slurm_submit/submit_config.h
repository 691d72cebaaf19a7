#pragma once
// The submit helper's settings (ring-slurm-submit, docs/slurm.md "Whose
// account runs the jobs"): a YAML file only root may change. The helper
// runs setuid root on behalf of the master's account, so it trusts nothing
// its caller says about where the agent binary is, where the master is or
// which slurm.conf to use: those come from this file.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace ring::submit {

inline constexpr const char* kDefaultConfigPath = "/etc/ringmaster/slurm-submit.yaml";

struct SubmitConfig {
  std::string master_user;       // the master's Unix account: the only caller besides root
  std::string master_url;        // where the helper checks an allocation's credential
  std::string ca_file;           // CA file for an https master_url; empty: the system's
  std::string agent_binary;      // ringagent as the nodes see it
  std::string agent_master_url;  // how the job's agents reach the master; default master_url
  std::string agent_ca_file;     // the CA file job agents trust, as the nodes see it
  std::string job_dir;           // each job's folder is <job_dir>/<allocation>, made for its owner
  int64_t min_uid = 1000;        // no job runs as an account below this (root never)
  std::string slurm_conf;        // SLURM_CONF for sbatch, squeue and scancel; empty: Slurm's default
  std::string slurm_bin_dir = "/usr/bin";  // where sbatch, squeue and scancel are
};

// Whether root alone can change `path` and every folder above it: each is
// owned by root and not writable by group or others (a sticky folder such
// as /tmp may be, since others cannot replace what root put there). A
// symbolic link anywhere on the way is refused.
Status CheckOnlyRootCanChange(const std::string& path);

// Reads and checks the file at `path` (CheckOnlyRootCanChange first).
Result<SubmitConfig> LoadSubmitConfig(const std::string& path);

}  // namespace ring::submit
