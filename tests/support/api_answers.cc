#include "tests/support/api_answers.h"

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace ring::testing {
namespace {

// Bodies the checker reads as text; any other media is checked by its type
// and size only (backups, tar.gz, rendezvous values).
bool IsText(const std::string& content_type) {
  return content_type.rfind("application/json", 0) == 0 || content_type.rfind("text/", 0) == 0;
}

std::string NodeExecutable() {
  const char* node = std::getenv("RING_NODE");
  return node && *node ? node : "node";
}

}  // namespace

Status CheckApiAnswers(const std::vector<ApiAnswer>& answers, const std::string& scratch_file) {
  {
    std::ofstream out(scratch_file, std::ios::trunc);
    for (const auto& a : answers) {
      nlohmann::json line = {{"method", a.method},
                             {"target", a.target},
                             {"status", a.status},
                             {"content_type", a.content_type},
                             {"body_bytes", a.body.size()}};
      if (IsText(a.content_type)) line["body"] = a.body;
      out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    if (!out) return Unavailable("cannot write the answers to " + scratch_file);
  }
  const std::string source = SourceDir();
  auto run = RunCommand({NodeExecutable(), source + "/tests/openapi/check_answers.mjs",
                         source + "/docs/openapi.json", scratch_file});
  if (run.exit_code == 0) return Status::Ok();
  if (run.exit_code == 1)
    return InvalidArgument("answers that docs/openapi.json does not describe:\n" + run.out + run.err);
  return Unavailable("cannot check the answers against docs/openapi.json (exit " +
                     std::to_string(run.exit_code) + "; run deploy/install-deps.sh for Node.js and " +
                     "tests/openapi's packages):\n" + run.out + run.err);
}

void ApiAnswerLog::Add(ApiAnswer answer) {
  std::lock_guard lock(mu_);
  answers_.push_back(std::move(answer));
}

Status ApiAnswerLog::CheckAndClear(const std::string& scratch_file) {
  std::vector<ApiAnswer> answers;
  {
    std::lock_guard lock(mu_);
    answers.swap(answers_);
  }
  if (answers.empty()) return Status::Ok();
  return CheckApiAnswers(answers, scratch_file);
}

}  // namespace ring::testing
