// The harness piece that checks the master's answers against
// docs/openapi.json (tests/support/api_answers.h): answers that match pass,
// and a body, status or media type the document does not describe fails,
// naming the route, the status and what the validator found.
#include "tests/support/api_answers.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <thread>

namespace ring::testing {
namespace {

std::string Scratch() {
  return ::testing::TempDir() + "/api-answers-" + std::to_string(::getpid()) + ".jsonl";
}

// Removes the scratch file when the test program ends.
class ScratchRemover : public ::testing::Environment {
 public:
  void TearDown() override { std::remove(Scratch().c_str()); }
};
const auto* const kScratchRemover = ::testing::AddGlobalTestEnvironment(new ScratchRemover);

const std::string kTrial =
    R"({"id": 4, "task_id": 4, "experiment_id": 3, "state": "ACTIVE", "hparams": {"lr": 0.1},
  "seed": 7, "restarts": 0, "total_batches": 100, "best_validation": null, "latest_checkpoint": null,
  "request_id": 1, "searcher_operation": {"length": 500}, "last_exit_reason": null,
  "created_at": "2024-05-01T10:00:00.000Z", "ended_at": null, "log_signal": null, "log_policy_matches": []})";

ApiAnswer Json(std::string method, std::string target, int status, std::string body) {
  return {std::move(method), std::move(target), status, "application/json", std::move(body)};
}

// The check's verdict on one answer.
Status CheckOne(const ApiAnswer& answer) {
  return CheckApiAnswers({answer}, Scratch());
}

TEST(ApiAnswers, AnswersTheDocumentDescribesPass) {
  const std::vector<ApiAnswer> answers = {
      Json("GET", "/api/v1/health", 200, R"({"status": "ok", "version": "0.1.0"})"),
      Json("GET", "/api/v1/trials/4?x=1", 200, kTrial),
      // Errors of documented routes, of unknown ones and of a wrong method.
      Json("GET", "/api/v1/trials/99", 404, R"({"error": {"code": "not_found", "message": "no trial 99"}})"),
      Json("GET", "/api/v1/nothing", 404, R"({"error": {"code": "not_found", "message": "no route"}})"),
      Json("DELETE", "/api/v1/health", 405, R"({"error": {"code": "invalid_argument", "message": "GET"}})"),
      // A conditional GET's 304 has no body; raw bytes are checked by type.
      {"GET", "/api/v1/trials/4", 304, "", ""},
      {"PUT", "/api/v1/allocations/4.0/rendezvous?key=k", 204, "application/octet-stream", ""},
      {"GET", "/api/v1/master/backup", 200, "application/vnd.sqlite3", std::string("SQLite format 3\0", 16)},
      // The web UI's files are not API answers.
      {"GET", "/experiments/3", 200, "text/html", "<!doctype html>"},
  };
  Status s = CheckApiAnswers(answers, Scratch());
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(ApiAnswers, ABodyThatBreaksItsSchemaFailsNamingRouteStatusAndError) {
  std::string wrong = kTrial;
  wrong.replace(wrong.find("\"ACTIVE\""), 8, "\"RUNNING\"");
  Status s = CheckOne(Json("GET", "/api/v1/trials/4", 200, wrong));
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("GET /api/v1/trials/{id} answered 200"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("/state must be equal to one of the allowed values"), std::string::npos)
      << s.message();
}

TEST(ApiAnswers, AMissingOrUndocumentedFieldFails) {
  std::string missing = kTrial;
  missing.replace(missing.find("\"seed\": 7,"), 10, "");
  Status s = CheckOne(Json("GET", "/api/v1/trials/4", 200, missing));
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("must have required property 'seed'"), std::string::npos) << s.message();

  s = CheckOne(Json("GET", "/api/v1/health", 200, R"({"status": "ok", "version": "1", "uptime": 3})"));
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("must NOT have additional properties: \"uptime\""), std::string::npos)
      << s.message();
}

TEST(ApiAnswers, AnErrorThatIsNotAnErrorBodyFails) {
  Status s = CheckOne(Json("GET", "/api/v1/trials/99", 404, R"({"message": "no trial 99"})"));
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("GET /api/v1/trials/{id} answered 404"), std::string::npos) << s.message();
  // An unknown code is not an error code of the API.
  s = CheckOne(Json("GET", "/api/v1/trials/99", 404, R"({"error": {"code": "gone", "message": "x"}})"));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  // A success to a path the API does not have.
  s = CheckOne(Json("GET", "/api/v1/nothing", 200, "{}"));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
}

TEST(ApiAnswers, AnUndocumentedMediaTypeOrBodyFails) {
  Status s = CheckOne({"GET", "/api/v1/health", 200, "text/html", "<p>ok</p>"});
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Content-Type is \"text/html\""), std::string::npos) << s.message();
  // 204 is documented without a body.
  s = CheckOne({"PUT", "/api/v1/allocations/4.0/rendezvous?key=k", 204, "application/json", "{}"});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  // JSON that does not parse.
  s = CheckOne(Json("GET", "/api/v1/health", 200, R"({"status": "ok",)"));
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("the body is not JSON"), std::string::npos) << s.message();
}

TEST(ApiAnswers, TheLogChecksWhatEveryThreadAddedOnce) {
  ApiAnswerLog log;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&log, i] {
      log.Add(Json("GET", "/api/v1/health", 200, R"({"status": "ok", "version": "1"})"));
      if (i == 2) log.Add(Json("GET", "/api/v1/health", 200, R"({"status": "fine", "version": "1"})"));
    });
  for (auto& t : threads) t.join();
  Status s = log.CheckAndClear(Scratch());
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("5 answers checked"), std::string::npos) << s.message();
  // Checked answers are forgotten.
  EXPECT_TRUE(log.CheckAndClear(Scratch()).ok());
}

}  // namespace
}  // namespace ring::testing
