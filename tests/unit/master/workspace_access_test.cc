// The reading rule and where a submission goes, on a MemoryStore: owners and
// admins always read; every user while experiments are team-readable;
// otherwise the members of the experiment's workspace, never through the
// default workspace. Pools bound to a user's (unarchived) workspaces; the
// project a submission names (by id, or by the config's workspace and
// project names), checked against membership and archiving;
// a workspace's default pool for a config that names none.
#include <gtest/gtest.h>

#include "master/api/experiment_placement.h"
#include "master/lifecycle/read_access.h"
#include "master/store/memory_store.h"

namespace ring {
namespace {

class WorkspaceAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ws =
        store_.CreateWorkspace({.name = "nlp",
                                .created_by = "admin",
                                .members = {{"ada", WorkspaceRole::kAdmin}, {"bob", WorkspaceRole::kMember}},
                                .pools = {{"gpu", true}}});
    ASSERT_TRUE(ws.ok());
    workspace_ = ws->id;
    auto p = store_.CreateProject({.workspace_id = workspace_, .name = "bert", .created_by = "ada"});
    ASSERT_TRUE(p.ok());
    project_ = p->id;
    in_nlp_ = Experiment(project_);
    in_default_ = Experiment(kDefaultProjectId);
  }
  int64_t Experiment(int64_t project) {
    ExperimentRecord e;
    e.name = "e";
    e.owner = "ada";
    e.config_yaml = "name: e\n";
    e.project_id = project;
    return store_.CreateExperiment(e, "model").value();
  }
  bool Reads(int64_t experiment, const std::string& user, bool admin, bool team_readable) {
    auto e = store_.GetExperiment(experiment);
    auto r = MayReadExperiment(store_, *e, {user, admin, team_readable});
    EXPECT_TRUE(r.ok());
    return r.ok() && *r;
  }
  MemoryStore store_;
  int64_t workspace_ = 0, project_ = 0, in_nlp_ = 0, in_default_ = 0;
};

TEST_F(WorkspaceAccessTest, TeamReadableLetsEveryoneRead) {
  for (int64_t e : {in_nlp_, in_default_}) {
    EXPECT_TRUE(Reads(e, "carol", false, true));
    EXPECT_TRUE(Reads(e, "bob", false, true));
  }
}

TEST_F(WorkspaceAccessTest, PrivateKeepsAnExperimentToItsWorkspace) {
  EXPECT_TRUE(Reads(in_nlp_, "ada", false, false)) << "the owner";
  EXPECT_TRUE(Reads(in_nlp_, "bob", false, false)) << "a member";
  EXPECT_FALSE(Reads(in_nlp_, "carol", false, false)) << "no member";
  EXPECT_TRUE(Reads(in_nlp_, "carol", true, false)) << "an admin";
  EXPECT_FALSE(Reads(in_default_, "bob", false, false)) << "the default workspace widens nothing";
  EXPECT_TRUE(Reads(in_default_, "ada", false, false));
  ASSERT_TRUE(store_.RemoveWorkspaceMember(workspace_, "bob").ok());
  EXPECT_FALSE(Reads(in_nlp_, "bob", false, false));
}

TEST_F(WorkspaceAccessTest, BoundPoolsAreThoseOfUnarchivedWorkspaces) {
  EXPECT_EQ(PoolsBoundFor(store_, "bob").value(), std::vector<std::string>{"gpu"});
  EXPECT_TRUE(PoolsBoundFor(store_, "carol")->empty());
  ASSERT_TRUE(store_.UpdateWorkspace(workspace_, {.archived = true}).ok());
  EXPECT_TRUE(PoolsBoundFor(store_, "bob")->empty());
}

const std::string kNoNames = "name: x\n";

TEST_F(WorkspaceAccessTest, ASubmissionGoesToAProjectOfTheSubmittersWorkspace) {
  const Principal bob{2, "bob", UserRole::kUser}, carol{3, "carol", UserRole::kUser},
      admin{1, "admin", UserRole::kAdmin};
  EXPECT_EQ(PlaceSubmission(store_, carol, std::nullopt, kNoNames)->project.id, kDefaultProjectId);
  EXPECT_EQ(PlaceSubmission(store_, bob, project_, kNoNames)->workspace.name, "nlp");
  auto refused = PlaceSubmission(store_, carol, project_, kNoNames);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("project_id"), std::string::npos);
  EXPECT_TRUE(PlaceSubmission(store_, admin, project_, kNoNames).ok());
  EXPECT_EQ(PlaceSubmission(store_, bob, 99, kNoNames).status().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(store_.UpdateProject(project_, {.archived = true}).ok());
  EXPECT_EQ(PlaceSubmission(store_, bob, project_, kNoNames).status().code(), ErrorCode::kInvalidArgument);
}

// Determined's workspace and project keys name the project when the
// request gives no project_id; the same membership and archiving rules.
TEST_F(WorkspaceAccessTest, AConfigNamesItsProjectByWorkspaceAndName) {
  const Principal bob{2, "bob", UserRole::kUser}, carol{3, "carol", UserRole::kUser};
  const std::string named = "name: x\nworkspace: nlp\nproject: bert\n";
  EXPECT_TRUE(ConfigNamesProject(named));
  EXPECT_FALSE(ConfigNamesProject("name: x\nworkspace: nlp\n")) << "both or neither";
  EXPECT_EQ(PlaceSubmission(store_, bob, std::nullopt, named)->project.id, project_);
  EXPECT_EQ(PlaceSubmission(store_, bob, kDefaultProjectId, named)->project.id, kDefaultProjectId)
      << "project_id wins";
  const std::vector<std::pair<Principal, std::string>> refusals = {
      {carol, named}, {bob, "workspace: nlp\nproject: gpt\n"}, {bob, "workspace: cv\nproject: bert\n"}};
  for (const auto& [who, yaml] : refusals) {
    auto refused = PlaceSubmission(store_, who, std::nullopt, yaml);
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << yaml;
    EXPECT_EQ(refused.status().message().rfind("workspace/project: project \"", 0), 0u)
        << refused.status().message();
  }
  ASSERT_TRUE(store_.UpdateWorkspace(workspace_, {.archived = true}).ok());
  auto archived = PlaceSubmission(store_, bob, std::nullopt, named);
  EXPECT_NE(archived.status().message().find("is archived"), std::string::npos)
      << archived.status().message();
}

TEST_F(WorkspaceAccessTest, TheWorkspacesDefaultPoolTakesAConfigThatNamesNone) {
  const auto nlp = store_.GetWorkspace(workspace_).value();
  EXPECT_FALSE(ConfigNamesPool("name: x\n"));
  EXPECT_FALSE(ConfigNamesPool("resources:\n  slots_per_trial: 2\n"));
  EXPECT_TRUE(ConfigNamesPool("resources:\n  resource_pool: cpu\n"));
  auto placed = WithWorkspacePool("name: x\nresources:\n  slots_per_trial: 2\n", nlp);
  ASSERT_TRUE(placed.ok());
  EXPECT_NE(placed->find("resource_pool: gpu"), std::string::npos) << *placed;
  EXPECT_NE(placed->find("slots_per_trial: 2"), std::string::npos) << *placed;
  const std::string named = "name: x\nresources:\n  resource_pool: cpu\n";
  EXPECT_EQ(WithWorkspacePool(named, nlp).value(), named) << "the config's pool wins";
  const auto uncategorized = store_.GetWorkspace(kDefaultWorkspaceId).value();
  EXPECT_EQ(WithWorkspacePool("name: x\n", uncategorized).value(), "name: x\n") << "no default pool";
}

}  // namespace
}  // namespace ring
