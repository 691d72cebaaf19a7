#include "master/rm/slurmrm/slurm_state.h"

#include <nlohmann/json.hpp>

namespace ring {
namespace {

using nlohmann::json;

std::string Text(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  // Later Slurm versions give states as arrays of flags.
  if (it->is_array() && !it->empty() && it->front().is_string()) return it->front().get<std::string>();
  return "";
}

int64_t Number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  // v0.0.39+: {"set": true, "number": N}
  if (it->is_object() && it->contains("number") && (*it)["number"].is_number_integer())
    return (*it)["number"].get<int64_t>();
  return 0;
}

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

Result<json> Parse(std::string_view text, const char* what, const char* list) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Unavailable(std::string(what) + " did not answer JSON");
  if (auto errors = doc.find("errors"); errors != doc.end() && errors->is_array() && !errors->empty())
    return Unavailable(std::string(what) + " reported: " + errors->front().dump().substr(0, 300));
  if (!doc.contains(list) || !doc[list].is_array())
    return Unavailable(std::string(what) + " answered JSON without \"" + list + "\"");
  return doc;
}

}  // namespace

int64_t GpusInGres(std::string_view gres) {
  int64_t total = 0;
  size_t at = 0;
  while (at < gres.size()) {
    size_t end = gres.find(',', at);
    if (end == std::string_view::npos) end = gres.size();
    std::string_view item = gres.substr(at, end - at);
    at = end + 1;
    item = item.substr(0, item.find('('));  // drop "(S:0-1)" or "(IDX:0-3)"
    if (item.rfind("gpu", 0) != 0) continue;
    const size_t colon = item.rfind(':');
    if (colon == std::string_view::npos) {
      total += 1;
      continue;
    }
    int64_t n = 0;
    bool digits = colon + 1 < item.size();
    for (char c : item.substr(colon + 1)) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      n = n * 10 + (c - '0');
    }
    total += digits ? n : 1;  // "gpu:a100" alone is one
  }
  return total;
}

Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text) {
  auto doc = Parse(text, "sinfo --json", "nodes");
  if (!doc.ok()) return doc.status();
  std::vector<SlurmNode> nodes;
  for (const auto& n : (*doc)["nodes"]) {
    if (!n.is_object()) continue;
    SlurmNode node;
    node.name = Text(n, "name");
    if (node.name.empty()) continue;
    node.state = Text(n, "state");
    for (auto& c : node.state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    node.flags = Strings(n, "state_flags");
    node.partitions = Strings(n, "partitions");
    node.cpus = Number(n, "cpus");
    node.gpus = GpusInGres(Text(n, "gres"));
    node.usable = node.state == "idle" || node.state == "mixed" || node.state == "allocated";
    for (const auto& f : node.flags)
      if (f == "DRAIN" || f == "DRAINING" || f == "DRAINED" || f == "NOT_RESPONDING" || f == "FAIL" ||
          f == "MAINTENANCE" || f == "REBOOT_REQUESTED" || f == "POWERED_DOWN" || f == "POWERING_DOWN")
        node.usable = false;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  auto doc = Parse(text, "squeue --json", "jobs");
  if (!doc.ok()) return doc.status();
  std::vector<SlurmJob> jobs;
  for (const auto& j : (*doc)["jobs"]) {
    if (!j.is_object()) continue;
    SlurmJob job;
    job.id = Number(j, "job_id");
    if (job.id <= 0) continue;
    job.name = Text(j, "name");
    job.state = Text(j, "job_state");
    job.reason = Text(j, "state_reason");
    job.nodes = Text(j, "nodes");
    if (j.contains("user_id")) job.user_id = Number(j, "user_id");
    job.work_dir = Text(j, "current_working_directory");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Result<std::vector<SlurmJob>> ParseSacctJson(std::string_view text) {
  auto doc = Parse(text, "sacct --json", "jobs");
  if (!doc.ok()) return doc.status();
  std::vector<SlurmJob> jobs;
  for (const auto& j : (*doc)["jobs"]) {
    if (!j.is_object()) continue;
    SlurmJob job;
    job.id = Number(j, "job_id");
    if (job.id <= 0) continue;
    job.name = Text(j, "name");
    job.nodes = Text(j, "nodes");
    job.from_accounting = true;
    if (auto state = j.find("state"); state != j.end() && state->is_object()) {
      job.state = Text(*state, "current");
      job.reason = Text(*state, "reason");
    }
    if (auto exit = j.find("exit_code");
        exit != j.end() && exit->is_object() && exit->contains("return_code"))
      job.exit_code = Number(*exit, "return_code");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

bool SlurmJobEnded(std::string_view state) {
  return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT" ||
         state == "NODE_FAIL" || state == "PREEMPTED" || state == "OUT_OF_MEMORY" || state == "BOOT_FAIL" ||
         state == "DEADLINE" || state == "REVOKED" || state == "SPECIAL_EXIT";
}

std::string DescribePendingReason(std::string_view reason) {
  struct Known {
    std::string_view reason, sentence;
  };
  static constexpr Known kKnown[] = {
      {"Resources", "it waits for free nodes in the partition"},
      {"Priority", "jobs of higher priority are ahead of it"},
      {"Dependency", "it waits for another Slurm job it depends on"},
      {"ReqNodeNotAvail", "a node it needs is down, drained or reserved"},
      {"PartitionDown", "the Slurm partition is down"},
      {"PartitionInactive", "the Slurm partition is inactive"},
      {"PartitionNodeLimit", "it asks for more nodes than the partition allows"},
      {"PartitionTimeLimit", "its time limit is beyond the partition's"},
      {"NodeDown", "a node it needs is down"},
      {"BeginTime", "its start time has not come yet"},
      {"JobHeldUser", "it is held (scontrol release lets it run)"},
      {"JobHeldAdmin", "a Slurm administrator holds it"},
      {"QOSMaxGRESPerUser", "the QOS's limit of GPUs per user is reached"},
      {"QOSMaxCpuPerUserLimit", "the QOS's limit of CPUs per user is reached"},
      {"QOSMaxJobsPerUserLimit", "the QOS's limit of running jobs per user is reached"},
      {"QOSMaxNodePerUserLimit", "the QOS's limit of nodes per user is reached"},
      {"QOSGrpGRES", "the QOS's group limit of GPUs is reached"},
      {"QOSGrpCpuLimit", "the QOS's group limit of CPUs is reached"},
      {"AssocMaxJobsLimit", "the account's limit of running jobs is reached"},
      {"AssocGrpGRES", "the account's limit of GPUs is reached"},
      {"AssocGrpCpuLimit", "the account's limit of CPUs is reached"},
      {"InvalidAccount", "its account is not valid in Slurm"},
      {"InvalidQOS", "its QOS is not valid in Slurm"},
      {"Reservation", "it waits for its advanced reservation"},
      {"Licenses", "it waits for a license"},
      {"None", "Slurm has not decided on it yet"},
  };
  for (const auto& k : kKnown)
    if (k.reason == reason) return std::string(k.sentence) + " (Slurm: " + std::string(reason) + ")";
  return "Slurm keeps it pending (reason \"" + std::string(reason) + "\")";
}

}  // namespace ring
