#pragma once
// SlurmCommands through slurmrestd (docs/slurm.md "Through slurmrestd"):
// Slurm's own REST interface, where a site runs it. Each job is submitted
// and cancelled with a token for its owner's linked account, so Slurm runs
// it as that account; nodes and jobs are read as the pool's service
// account. The tokens are the JSON Web Tokens Slurm's auth/jwt checks,
// signed (HS256) with the site's key, short-lived and made per call.
#include <chrono>
#include <cstdint>
#include <string>

#include "master/rm/slurmrm/slurm_commands.h"
#include "master/rm/slurmrm/slurm_options.h"

namespace ring {

// A token for `user` that Slurm accepts until now + lifespan: the JWT
// {"iat": now, "exp": now + lifespan, "sun": user} signed with `key`.
std::string SlurmJwt(const std::string& key, const std::string& user, int64_t now_unix,
                     std::chrono::seconds lifespan);

// The key of `path`, which must be a regular file only its owner can read
// (it lets its holder act as any Slurm user).
Result<std::string> ReadSlurmJwtKey(const std::string& path);

class RestSlurmCommands : public SlurmCommands {
 public:
  RestSlurmCommands(SlurmRestOptions options, std::string key,
                    std::chrono::milliseconds timeout = std::chrono::seconds(30));
  Result<std::string> SinfoJson() override;
  Result<std::string> SqueueJson(const std::string& partition) override;
  Result<std::string> SacctJson(const std::vector<int64_t>& job_ids) override;
  Result<int64_t> Sbatch(const SbatchJob& job) override;
  Status Scancel(int64_t job_id, const std::string& signal) override;

 private:
  // One request as `user`; a transport failure or an HTTP error is an
  // error naming `what`; the answer's JSON otherwise.
  Result<nlohmann::json> Call(const std::string& what, const std::string& method, const std::string& target,
                              const std::string& user, const std::string& body = "");
  std::string Path(const std::string& tail) const;

  const SlurmRestOptions options_;
  const std::string key_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace ring
