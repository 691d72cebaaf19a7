#include "master/rm/slurmrm/slurm_job_script.h"

#include <algorithm>

namespace ring {

std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::vector<std::string> SbatchArgs(const SlurmPoolOptions& pool, const SlurmJobRequest& job) {
  std::vector<std::string> args = {"--partition=" + pool.partition};
  if (!pool.account.empty()) args.push_back("--account=" + pool.account);
  std::string qos = pool.qos;
  for (const auto& band : pool.priority_qos)
    if (job.priority <= band.max_priority) {
      qos = band.qos;
      break;
    }
  if (!qos.empty()) args.push_back("--qos=" + qos);
  if (const int64_t nice = (std::max<int64_t>(job.priority, 1) - 1) * pool.nice_per_priority; nice > 0)
    args.push_back("--nice=" + std::to_string(nice));
  std::string nodelist;
  for (const auto& n : job.nodes) nodelist += (nodelist.empty() ? "" : ",") + n;
  args.push_back("--nodes=" + std::to_string(job.nodes.size()));
  args.push_back("--nodelist=" + nodelist);
  args.push_back("--ntasks-per-node=1");
  if (pool.slot_type == SlurmSlotType::kCuda)
    args.push_back("--gres=gpu:" + std::to_string(job.slots_per_node));
  else
    args.push_back("--cpus-per-task=" + std::to_string(job.slots_per_node));
  if (job.whole_nodes) args.push_back("--exclusive");
  args.insert(args.end(), pool.sbatch_args.begin(), pool.sbatch_args.end());
  return args;
}

std::string BatchScript(const JobAgentCommand& c) {
  std::string agent = ShellQuote(c.agent_binary) + " --slurm-allocation " + ShellQuote(c.allocation_id) +
                      " --master " + ShellQuote(c.master_url) +
                      (c.credential_file.empty() ? " --credential-env " + std::string(kJobCredentialVariable)
                                                 : " --credential-file " + ShellQuote(c.credential_file));
  if (!c.ca_file.empty()) agent += " --ca-file " + ShellQuote(c.ca_file);
  if (!c.container_runtime.empty()) agent += " --container-runtimes " + ShellQuote(c.container_runtime);
  return "#!/bin/sh\n"
         "# Ringmaster allocation " +
         c.allocation_id +
         ": one ringagent per node of this job runs that node's ranks\n"
         "# and reports to the master; the job ends when they have all exited.\n"
         "exec srun --ntasks-per-node=1 --kill-on-bad-exit=0 " +
         agent + "\n";
}

}  // namespace ring
