// Workspaces and projects behave the same in both Store implementations:
// the defaults exist from the start and hold every experiment submitted
// without a project; names are unique (projects within their workspace);
// members and bound pools are set, changed and removed; a workspace or
// project that holds experiments is not deleted; experiments move.
#include <gtest/gtest.h>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreWorkspacesTest : public ::testing::Test {
 protected:
  Store& store() { return *holder_.store; }
  Holder holder_;
};

TYPED_TEST_SUITE(StoreWorkspacesTest, testing::BothStores);

TYPED_TEST(StoreWorkspacesTest, TheDefaultsExistAndTakeExperimentsWithoutAProject) {
  Store& s = this->store();
  auto ws = s.GetWorkspace(kDefaultWorkspaceId);
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  EXPECT_EQ(ws->name, "Uncategorized");
  EXPECT_EQ(ws->num_projects, 1);
  auto project = s.GetProject(kDefaultProjectId);
  ASSERT_TRUE(project.ok());
  EXPECT_EQ(project->workspace_id, kDefaultWorkspaceId);
  const int64_t e = testing::NewExperiment(s);
  EXPECT_EQ(s.GetExperiment(e)->project_id, kDefaultProjectId);
  EXPECT_EQ(s.GetProject(kDefaultProjectId)->num_experiments, 1);
  EXPECT_EQ(s.DeleteWorkspace(kDefaultWorkspaceId).code(), ErrorCode::kConflict);
  EXPECT_EQ(s.DeleteProject(kDefaultProjectId).code(), ErrorCode::kConflict);
}

TYPED_TEST(StoreWorkspacesTest, WorkspacesAreUniqueWithMembersAndPools) {
  Store& s = this->store();
  auto nlp = s.CreateWorkspace({.name = "nlp",
                                .description = "language",
                                .created_by = "ada",
                                .members = {{"ada", WorkspaceRole::kAdmin}},
                                .pools = {{"gpu", true}}});
  ASSERT_TRUE(nlp.ok()) << nlp.status().ToString();
  EXPECT_GT(nlp->id, kDefaultWorkspaceId);
  ASSERT_EQ(nlp->members.size(), 1u);
  EXPECT_EQ(nlp->members[0].role, WorkspaceRole::kAdmin);
  EXPECT_EQ(s.CreateWorkspace({.name = "nlp", .created_by = "bob"}).status().code(), ErrorCode::kConflict);

  ASSERT_TRUE(s.SetWorkspaceMember(nlp->id, {"bob", WorkspaceRole::kMember}).ok());
  ASSERT_TRUE(s.SetWorkspaceMember(nlp->id, {"ada", WorkspaceRole::kMember}).ok());
  ASSERT_TRUE(s.BindWorkspacePool(nlp->id, {"cpu", true}).ok());
  auto got = s.GetWorkspace(nlp->id);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->members.size(), 2u);
  EXPECT_EQ(got->members[0].username, "ada");
  EXPECT_EQ(got->members[0].role, WorkspaceRole::kMember);
  ASSERT_EQ(got->pools.size(), 2u);
  EXPECT_EQ(got->pools[0].pool, "cpu");
  EXPECT_TRUE(got->pools[0].is_default);
  EXPECT_FALSE(got->pools[1].is_default) << "one default pool per workspace";

  const uint64_t before = s.ExperimentsGeneration();
  ASSERT_TRUE(s.RemoveWorkspaceMember(nlp->id, "bob").ok());
  EXPECT_NE(s.ExperimentsGeneration(), before) << "who reads the lists changed";
  EXPECT_EQ(s.RemoveWorkspaceMember(nlp->id, "bob").code(), ErrorCode::kNotFound);
  ASSERT_TRUE(s.UnbindWorkspacePool(nlp->id, "gpu").ok());
  EXPECT_EQ(s.UnbindWorkspacePool(nlp->id, "gpu").code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.SetWorkspaceMember(99, {"bob", WorkspaceRole::kMember}).code(), ErrorCode::kNotFound);

  ASSERT_TRUE(s.UpdateWorkspace(nlp->id, {.name = "language", .archived = true}).ok());
  got = s.GetWorkspace(nlp->id);
  EXPECT_EQ(got->name, "language");
  EXPECT_EQ(got->description, "language");
  EXPECT_TRUE(got->archived);
  EXPECT_EQ(s.UpdateWorkspace(nlp->id, {.name = "Uncategorized"}).code(), ErrorCode::kConflict);
  EXPECT_EQ(s.UpdateWorkspace(99, {.archived = false}).code(), ErrorCode::kNotFound);
  auto all = s.ListWorkspaces();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].members.size(), 1u);
}

TYPED_TEST(StoreWorkspacesTest, ProjectsAreUniqueInTheirWorkspaceAndHoldMovedExperiments) {
  Store& s = this->store();
  auto ws = s.CreateWorkspace({.name = "cv", .created_by = "ada"});
  ASSERT_TRUE(ws.ok());
  auto mnist = s.CreateProject({.workspace_id = ws->id, .name = "mnist", .created_by = "ada"});
  ASSERT_TRUE(mnist.ok()) << mnist.status().ToString();
  EXPECT_EQ(s.CreateProject({.workspace_id = ws->id, .name = "mnist", .created_by = "bob"}).status().code(),
            ErrorCode::kConflict);
  EXPECT_TRUE(
      s.CreateProject({.workspace_id = kDefaultWorkspaceId, .name = "mnist", .created_by = "bob"}).ok())
      << "the same name in another workspace";
  EXPECT_EQ(s.CreateProject({.workspace_id = 99, .name = "x", .created_by = "bob"}).status().code(),
            ErrorCode::kNotFound);

  ExperimentRecord rec;
  rec.name = "in-project";
  rec.owner = "ada";
  rec.config_yaml = "name: x\n";
  rec.project_id = mnist->id;
  auto e = s.CreateExperiment(rec, "model");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(s.GetExperiment(*e)->project_id, mnist->id);
  rec.project_id = 99;
  EXPECT_EQ(s.CreateExperiment(rec, "model").status().code(), ErrorCode::kInvalidArgument);

  EXPECT_EQ(s.DeleteProject(mnist->id).code(), ErrorCode::kConflict);
  EXPECT_EQ(s.DeleteWorkspace(ws->id).code(), ErrorCode::kConflict);
  const uint64_t before = s.ExperimentsGeneration();
  ASSERT_TRUE(s.MoveExperiment(*e, kDefaultProjectId).ok());
  EXPECT_NE(s.ExperimentsGeneration(), before);
  EXPECT_EQ(s.GetExperiment(*e)->project_id, kDefaultProjectId);
  EXPECT_EQ(s.MoveExperiment(*e, 99).code(), ErrorCode::kNotFound);
  EXPECT_EQ(s.MoveExperiment(999, kDefaultProjectId).code(), ErrorCode::kNotFound);

  ASSERT_TRUE(s.UpdateProject(mnist->id, {.description = "digits", .archived = true}).ok());
  auto got = s.GetProject(mnist->id);
  EXPECT_EQ(got->description, "digits");
  EXPECT_TRUE(got->archived);
  EXPECT_EQ(got->num_experiments, 0);
  ASSERT_TRUE(s.CreateProject({.workspace_id = ws->id, .name = "empty", .created_by = "ada"}).ok());
  ASSERT_TRUE(s.DeleteProject(mnist->id).ok());
  EXPECT_EQ(s.GetProject(mnist->id).status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(s.DeleteWorkspace(ws->id).ok()) << "its empty projects go with it";
  EXPECT_EQ(s.GetWorkspace(ws->id).status().code(), ErrorCode::kNotFound);
  auto projects = s.ListProjects();
  ASSERT_TRUE(projects.ok());
  EXPECT_EQ(projects->size(), 2u);
}

}  // namespace
}  // namespace ring
