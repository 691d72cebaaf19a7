#include "master/rm/slurmrm/slurm_rest_commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/archive.h"
#include "common/http_client.h"
#include "master/rm/slurmrm/slurm_job_script.h"
#include "master/rm/slurmrm/slurm_rest_job.h"

namespace ring {
namespace {

std::string Base64Url(std::string_view data) {
  std::string text = Base64Encode(data);
  while (!text.empty() && text.back() == '=') text.pop_back();
  for (char& c : text) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return text;
}

// The messages of an answer's "errors" (Slurm puts its refusals there).
std::string ErrorsOf(const nlohmann::json& answer) {
  std::string text;
  if (auto errors = answer.find("errors"); errors != answer.end() && errors->is_array())
    for (const auto& e : *errors) {
      std::string one = e.value("description", "");
      if (one.empty()) one = e.value("error", "");
      if (!one.empty()) text += (text.empty() ? "" : "; ") + one;
    }
  return text;
}

}  // namespace

std::string SlurmJwt(const std::string& key, const std::string& user, int64_t now_unix,
                     std::chrono::seconds lifespan) {
  const std::string header = Base64Url(R"({"alg":"HS256","typ":"JWT"})");
  const nlohmann::json claims = {{"iat", now_unix}, {"exp", now_unix + lifespan.count()}, {"sun", user}};
  const std::string signed_part = header + "." + Base64Url(claims.dump());
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size(), mac, &length);
  return signed_part + "." + Base64Url(std::string_view(reinterpret_cast<const char*>(mac), length));
}

Result<std::string> ReadSlurmJwtKey(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return InvalidArgument("cannot open the Slurm JWT key " + path + ": " + std::strerror(errno));
  struct stat st {};
  std::string key;
  Status status = Status::Ok();
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = InvalidArgument("the Slurm JWT key " + path + " is not a regular file");
  } else if (st.st_mode & 077) {
    status = InvalidArgument("the Slurm JWT key " + path +
                             " may be read by others than its owner: it lets its holder act as any Slurm "
                             "user (chmod 0600)");
  } else {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 && key.size() < (1 << 16)) key.append(buf, n);
    if (n < 0) status = InvalidArgument("cannot read the Slurm JWT key " + path);
    if (status.ok() && key.size() < 16)
      status = InvalidArgument("the Slurm JWT key " + path + " is too short");
  }
  ::close(fd);
  if (!status.ok()) return status;
  return key;
}

RestSlurmCommands::RestSlurmCommands(SlurmRestOptions options, std::string key,
                                     std::chrono::milliseconds timeout)
    : options_(std::move(options)), key_(std::move(key)), timeout_(timeout) {}

std::string RestSlurmCommands::Path(const std::string& tail) const {
  return "/slurm/" + options_.api_version + tail;
}

Result<nlohmann::json> RestSlurmCommands::Call(const std::string& what, const std::string& method,
                                               const std::string& target, const std::string& user,
                                               const std::string& body) {
  auto url = Url::Parse(options_.url);
  if (!url.ok()) return url.status();
  HttpClient http(*url, timeout_);
  if (!options_.ca_file.empty()) http.SetCaFile(options_.ca_file);
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  http.SetHeader("X-SLURM-USER-NAME", user);
  http.SetHeader("X-SLURM-USER-TOKEN", SlurmJwt(key_, user, now, options_.token_lifespan));
  auto res = http.Request(method, target, body);
  if (!res.ok()) return Unavailable("slurmrestd " + what + ": " + res.status().message());
  nlohmann::json answer = nlohmann::json::parse(res->body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) {
    std::string text = res->body.substr(0, 200);
    return Unavailable("slurmrestd " + what + " answered HTTP " + std::to_string(res->status) + ": " + text);
  }
  if (res->status >= 400 && !answer.contains("job_id")) {
    const std::string errors = ErrorsOf(answer);
    return Unavailable("slurmrestd " + what + " answered HTTP " + std::to_string(res->status) +
                       (errors.empty() ? "" : ": " + errors));
  }
  return answer;
}

Result<std::string> RestSlurmCommands::SinfoJson() {
  auto answer = Call("GET nodes", "GET", Path("/nodes"), options_.user);
  if (!answer.ok()) return answer.status();
  return answer->dump();
}

// Every user's jobs, of the pool's partition only.
Result<std::string> RestSlurmCommands::SqueueJson(const std::string& partition) {
  auto answer = Call("GET jobs", "GET", Path("/jobs"), options_.user);
  if (!answer.ok()) return answer.status();
  if (auto jobs = answer->find("jobs"); jobs != answer->end() && jobs->is_array()) {
    nlohmann::json kept = nlohmann::json::array();
    for (auto& j : *jobs)
      if (j.is_object() && j.value("partition", "") == partition) kept.push_back(std::move(j));
    *jobs = std::move(kept);
  }
  return answer->dump();
}

// Accounting through slurmrestd's slurmdb plugin, one job at a time; a site
// without slurmdbd has no such path (404), like sacct without accounting.
Result<std::string> RestSlurmCommands::SacctJson(const std::vector<int64_t>& job_ids) {
  nlohmann::json all = {{"jobs", nlohmann::json::array()}};
  for (int64_t id : job_ids) {
    auto answer = Call("GET slurmdb job", "GET",
                       "/slurmdb/" + options_.api_version + "/job/" + std::to_string(id), options_.user);
    if (!answer.ok()) return answer.status();
    if (auto jobs = answer->find("jobs"); jobs != answer->end() && jobs->is_array())
      for (auto& j : *jobs) all["jobs"].push_back(std::move(j));
  }
  return all.dump();
}

Result<int64_t> RestSlurmCommands::Sbatch(const SbatchJob& job) {
  if (!job.run_as || job.run_as->user.empty())
    return Status(ErrorCode::kPermissionDenied,
                  "the allocation's owner has no linked Unix account, and this pool runs every job as "
                  "its owner's account");
  RestJobSubmission submission;
  submission.name = "ring-" + job.allocation_id;
  submission.options = job.args;
  submission.script = job.script;
  if (!options_.output_dir.empty())
    submission.output = options_.output_dir + "/ring-" + job.allocation_id + "-%j.out";
  // Slurm runs the script with this environment only: the job's agents find
  // srun on PATH, Slurm's configuration where the master's is, and the
  // allocation's credential in the variable the batch script names.
  const char* path = std::getenv("PATH");
  submission.environment["PATH"] = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  if (const char* conf = std::getenv("SLURM_CONF"); conf && *conf)
    submission.environment["SLURM_CONF"] = conf;
  submission.environment[kJobCredentialVariable] = job.credential;
  auto body = RestJobBody(submission);
  if (!body.ok()) return body.status();
  auto answer = Call("POST job/submit", "POST", Path("/job/submit"), job.run_as->user, body->dump());
  if (!answer.ok()) return answer.status();
  const auto id = answer->find("job_id");
  if (id == answer->end() || !id->is_number_integer() || id->get<int64_t>() <= 0) {
    const std::string errors = ErrorsOf(*answer);
    return Unavailable("slurmrestd refused the job" + (errors.empty() ? "" : ": " + errors));
  }
  return id->get<int64_t>();
}

// As the job's own user: Slurm lets a user cancel her own jobs, and the
// service account is nobody's operator.
Status RestSlurmCommands::Scancel(int64_t job_id, const std::string& signal) {
  auto found = Call("GET job", "GET", Path("/job/" + std::to_string(job_id)), options_.user);
  if (!found.ok()) return found.status();
  std::string user;
  if (auto jobs = found->find("jobs"); jobs != found->end() && jobs->is_array() && !jobs->empty())
    user = (*jobs)[0].value("user_name", "");
  if (user.empty()) return NotFound("slurmrestd knows no job " + std::to_string(job_id));
  std::string target = Path("/job/" + std::to_string(job_id));
  if (!signal.empty()) target += "?signal=" + PercentEncode(signal);
  auto answer = Call("DELETE job", "DELETE", target, user);
  if (!answer.ok()) return answer.status();
  if (const std::string errors = ErrorsOf(*answer); !errors.empty())
    return Unavailable("slurmrestd could not cancel job " + std::to_string(job_id) + ": " + errors);
  return Status::Ok();
}

}  // namespace ring
