// How the master lets agents in, without sockets: enrolment requests, the
// upgrade's headers, removal, rotation (AgentEnrolments on the in-memory
// store) and hellos judged against an enrolment and the ranks placed on the
// agent (JudgeHello).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "master/auth/cluster_token.h"
#include "master/rm/agentrm/agent_admission.h"
#include "master/rm/agentrm/agent_enrolments.h"
#include "master/store/memory_store.h"

namespace ring {
namespace {

namespace fs = std::filesystem;
const std::string kToken = std::string(64, 't');

class AgentEnrolmentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ring-enrol-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    enrolments_ = std::make_unique<AgentEnrolments>(store_, dir_ + "/cluster-token", kToken,
                                                    [this](AgentRefusal why) { ++counted_[why]; });
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Enrol(const std::string& id, int slots = 2) {
    auto issued = enrolments_->Enrol(
        "Bearer " + kToken,
        R"({"agent_id":")" + id + R"(","pool":"default","slots":)" + std::to_string(slots) + "}", "test");
    EXPECT_TRUE(issued.ok()) << issued.status().ToString();
    return issued.ok() ? issued->credential : "";
  }

  std::string dir_;
  MemoryStore store_;
  std::map<AgentRefusal, int> counted_;
  std::unique_ptr<AgentEnrolments> enrolments_;
};

TEST_F(AgentEnrolmentsTest, TheClusterTokenOnlyEnrolsAndTheCredentialConnects) {
  const std::string credential = Enrol("a1");
  EXPECT_EQ(credential.size(), 64u);
  EXPECT_NE(credential, kToken);
  // Only the hash is stored.
  auto rows = *store_.ListAgentEnrolments();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].credential_hash.find(credential), std::string::npos);
  EXPECT_EQ(rows[0].slots, 2);

  EXPECT_EQ(*enrolments_->Authenticate("Bearer " + credential, "a1", "test"), "a1");
  EXPECT_EQ(enrolments_->Authenticate("Bearer " + kToken, "a1", "test").status().code(),
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(enrolments_->Authenticate("Bearer " + credential, "a2", "test").status().code(),
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(enrolments_->Authenticate("Bearer " + credential, "", "test").status().code(),
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(enrolments_->Authenticate(credential, "a1", "test").status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(counted_[AgentRefusal::kWrongCredential], 1);
  EXPECT_EQ(counted_[AgentRefusal::kUnknownAgent], 1);
  EXPECT_EQ(counted_[AgentRefusal::kNoCredential], 2);

  // The id is taken: enrolling it again is a conflict, even with the token.
  auto again = enrolments_->Enrol("Bearer " + kToken, R"({"agent_id":"a1","slots":64})", "test");
  EXPECT_EQ(again.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(counted_[AgentRefusal::kAlreadyEnrolled], 1);
  auto no_token = enrolments_->Enrol("Bearer nope", R"({"agent_id":"a9","slots":1})", "test");
  EXPECT_EQ(no_token.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(counted_[AgentRefusal::kWrongClusterToken], 1);
}

TEST_F(AgentEnrolmentsTest, BadRequestsNameTheField) {
  struct Case {
    std::string body, field;
  };
  for (const auto& c : std::vector<Case>{{"[]", "JSON object"},
                                         {R"({"slots":1})", "agent_id"},
                                         {R"({"agent_id":"a/b","slots":1})", "agent_id"},
                                         {R"({"agent_id":"..","slots":1})", "agent_id"},
                                         // The ids of Slurm jobs' agents are not for enrolment.
                                         {R"({"agent_id":"slurm.1.n1","slots":1})", "slurm."},
                                         {R"({"agent_id":"a","slots":-1})", "slots"},
                                         {R"({"agent_id":"a","slots":5000})", "slots"},
                                         {R"({"agent_id":"a","slots":1.5})", "slots"},
                                         {R"({"agent_id":"a","pool":"","slots":1})", "pool"},
                                         {R"({"agent_id":"a","slots":1,"admin":true})", "admin"}}) {
    auto parsed = ParseEnrolRequest(c.body);
    ASSERT_FALSE(parsed.ok()) << c.body;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(c.field), std::string::npos) << parsed.status().message();
  }
  EXPECT_TRUE(store_.ListAgentEnrolments()->empty());
}

TEST_F(AgentEnrolmentsTest, ARemovedCredentialNeverConnectsAndTheIdEnrolsAgain) {
  const std::string old = Enrol("a1");
  ASSERT_TRUE(enrolments_->Revoke("a1").ok());
  EXPECT_FALSE(enrolments_->Authenticate("Bearer " + old, "a1", "test").ok());
  EXPECT_EQ(counted_[AgentRefusal::kRevoked], 1);
  EXPECT_FALSE(store_.ListAgentEnrolments()->at(0).revoked_at.empty());
  EXPECT_EQ(enrolments_->Revoke("nobody").code(), ErrorCode::kNotFound);
  // A master restart reads the removal back.
  AgentEnrolments reloaded(store_, dir_ + "/cluster-token", kToken);
  ASSERT_TRUE(reloaded.Load().ok());
  EXPECT_FALSE(reloaded.Authenticate("Bearer " + old, "a1", "test").ok());

  const std::string fresh = Enrol("a1");
  EXPECT_NE(fresh, old);
  EXPECT_TRUE(enrolments_->Authenticate("Bearer " + fresh, "a1", "test").ok());
  EXPECT_FALSE(enrolments_->Authenticate("Bearer " + old, "a1", "test").ok());
}

TEST_F(AgentEnrolmentsTest, RotationReplacesTheTokenFileAndKeepsCredentials) {
  const std::string credential = Enrol("a1");
  auto rotated = enrolments_->RotateClusterToken();
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/cluster-token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(*LoadOrCreateClusterToken(dir_ + "/cluster-token"), *rotated);
  EXPECT_FALSE(enrolments_->Enrol("Bearer " + kToken, R"({"agent_id":"a2","slots":1})", "t").ok());
  EXPECT_TRUE(enrolments_->Enrol("Bearer " + *rotated, R"({"agent_id":"a2","slots":1})", "t").ok());
  EXPECT_TRUE(enrolments_->Authenticate("Bearer " + credential, "a1", "test").ok());
}

TEST_F(AgentEnrolmentsTest, AllowSlotsRaisesTheEnrolledCount) {
  Enrol("a1", 1);
  ASSERT_TRUE(enrolments_->AllowSlots("a1", 8).ok());
  EXPECT_EQ(enrolments_->Find("a1")->slots, 8);
  EXPECT_EQ(store_.ListAgentEnrolments()->at(0).slots, 8);
  EXPECT_EQ(enrolments_->AllowSlots("a1", -1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(enrolments_->AllowSlots("nobody", 1).code(), ErrorCode::kNotFound);
}

proto::Hello HelloOf(const std::string& id, const std::string& pool, int slots,
                     std::vector<proto::RunningProcess> running = {}) {
  proto::Hello h;
  h.agent_id = id;
  h.pool = pool;
  for (int i = 0; i < slots; ++i) h.slots.push_back({i, "cpu", ""});
  h.running = std::move(running);
  return h;
}

TEST(JudgeHello, KeepsTheEnrolledIdPoolAndSlotsAndOnlyItsOwnRanks) {
  const Enrolment enrolled{"h", "default", 2, "t", false};
  const PlacedRanks placed = {{"mine", {0, 1}}};
  auto live = [](const std::string& id) { return id == "mine" || id == "theirs"; };

  auto other_id = JudgeHello(HelloOf("b", "default", 1), "a", enrolled, placed, live);
  EXPECT_EQ(other_id.refused, AgentRefusal::kHelloIdMismatch);
  auto other_pool = JudgeHello(HelloOf("a", "gpu", 1), "a", enrolled, placed, live);
  EXPECT_EQ(other_pool.refused, AgentRefusal::kPoolMismatch);

  auto greedy = JudgeHello(HelloOf("a", "", 64), "a", enrolled, placed, live);
  ASSERT_FALSE(greedy.refused);
  EXPECT_EQ(greedy.admitted.slots.size(), 2u);
  EXPECT_EQ(greedy.admitted.pool, "default");
  EXPECT_EQ(greedy.trimmed, std::vector<AgentRefusal>{AgentRefusal::kSlotsOverEnrolled});

  auto running = JudgeHello(
      HelloOf("a", "default", 2, {{"mine", 1, 10}, {"mine", 5, 11}, {"theirs", 0, 12}, {"ended", 0, 13}}),
      "a", enrolled, placed, live);
  ASSERT_FALSE(running.refused);
  // Rank 5 of its own allocation is dropped; the others stay so the lifecycle
  // kills them on this agent; a live allocation placed elsewhere is counted.
  ASSERT_EQ(running.admitted.running.size(), 3u);
  EXPECT_EQ(running.admitted.running[0].rank, 1);
  EXPECT_EQ(running.admitted.running[1].allocation_id, "theirs");
  EXPECT_EQ(running.trimmed, std::vector<AgentRefusal>{AgentRefusal::kForeignRunning});

  auto honest =
      JudgeHello(HelloOf("a", "default", 2, {{"mine", 0, 1}, {"ended", 0, 2}}), "a", enrolled, placed, live);
  EXPECT_FALSE(honest.refused);
  EXPECT_TRUE(honest.trimmed.empty());
}

TEST(AgentClaim, NeedsAWellFormedIdAndABearerCredential) {
  EXPECT_TRUE(ParseAgentClaim("Bearer abc", "node-1.x_y").ok());
  EXPECT_EQ(ParseAgentClaim("Bearer abc", "").status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(ParseAgentClaim("Bearer abc", "a b").status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(ParseAgentClaim("Bearer abc", std::string(129, 'a')).status().code(),
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(ParseAgentClaim("Basic abc", "a").status().code(), ErrorCode::kUnauthenticated);
  EXPECT_EQ(ParseAgentClaim("Bearer ", "a").status().code(), ErrorCode::kUnauthenticated);
}

}  // namespace
}  // namespace ring
