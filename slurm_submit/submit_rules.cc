#include "slurm_submit/submit_rules.h"

#include <nlohmann/json.hpp>

namespace ring::submit {

Status CheckAllocationId(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 64 && id.front() != '.';
  for (char c : id)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                c == '_' || c == '-');
  if (!ok)
    return InvalidArgument("--allocation must be 1-64 letters, digits, '.', '_' or '-', got \"" + id + "\"");
  return Status::Ok();
}

Status CheckSbatchOptions(const std::vector<std::string>& options) {
  // Options that would run something else, elsewhere, or as someone else.
  static const char* const kRefused[] = {
      "--wrap",      "--uid",          "--gid",       "--export",     "--export-file", "--get-user-env",
      "--chdir",     "--output",       "--error",     "--input",      "--job-name",    "--parsable",
      "--container", "--container-id", "--test-only", "--batch-file", "--help",        "--usage"};
  for (const auto& option : options) {
    if (option.size() < 3 || option.rfind("--", 0) != 0)
      return InvalidArgument("sbatch options must be long ones (--name or --name=value), got \"" + option +
                             "\"");
    const std::string name = option.substr(0, option.find('='));
    for (const char* refused : kRefused)
      if (name == refused)
        return Status(ErrorCode::kPermissionDenied,
                      "sbatch option " + name + " is the submit helper's to set, not its caller's");
  }
  return Status::Ok();
}

std::string NodelistOf(const std::vector<std::string>& options) {
  constexpr std::string_view kNodelist = "--nodelist=";
  std::string nodelist;
  for (const auto& option : options)
    if (option.rfind(kNodelist, 0) == 0) nodelist = option.substr(kNodelist.size());
  return nodelist;
}

Status CheckAccount(int64_t uid, int64_t min_uid) {
  if (uid <= 0 || uid < min_uid)
    return Status(ErrorCode::kPermissionDenied, "jobs never run as uid " + std::to_string(uid) +
                                                    ": accounts below min_uid " + std::to_string(min_uid) +
                                                    " are the system's");
  return Status::Ok();
}

Result<Grant> ParseGrant(const std::string& text) {
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array())
    return Unavailable("the master's grant answer is not the expected JSON");
  Grant grant;
  if (doc.contains("uid") && doc["uid"].is_number_integer()) grant.uid = doc["uid"].get<int64_t>();
  if (doc.contains("gid") && doc["gid"].is_number_integer()) grant.gid = doc["gid"].get<int64_t>();
  for (const auto& n : doc["nodes"])
    if (n.is_string()) grant.nodes.push_back(n.get<std::string>());
  return grant;
}

Status CheckGrant(const Grant& grant, int64_t uid, int64_t gid, const std::string& nodelist) {
  if (grant.uid < 0)
    return Status(ErrorCode::kPermissionDenied, "the allocation's owner has no linked Unix account");
  if (grant.uid != uid || grant.gid != gid)
    return Status(ErrorCode::kPermissionDenied, "the allocation's owner is uid " + std::to_string(grant.uid) +
                                                    " gid " + std::to_string(grant.gid) + ", not " +
                                                    std::to_string(uid) + ":" + std::to_string(gid));
  std::string granted;
  for (const auto& n : grant.nodes) granted += (granted.empty() ? "" : ",") + n;
  if (granted != nodelist)
    return Status(ErrorCode::kPermissionDenied,
                  "the allocation's nodes are \"" + granted + "\", not --nodelist=\"" + nodelist + "\"");
  return Status::Ok();
}

Status CheckContainerRuntime(const std::string& runtime) {
  if (runtime.empty() || runtime == "podman" || runtime == "docker" || runtime == "apptainer" ||
      runtime == "singularity")
    return Status::Ok();
  return InvalidArgument("--container-runtime must be podman, docker, apptainer or singularity, got \"" +
                         runtime + "\"");
}

Status CheckSignal(const std::string& signal) {
  bool ok = !signal.empty() && signal.size() <= 12;
  for (char c : signal) ok = ok && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
  if (!ok) return InvalidArgument("--signal must be a signal's name or number, got \"" + signal + "\"");
  return Status::Ok();
}

}  // namespace ring::submit
