// Workspaces and projects on a real master, agent and quadratic trial,
// through the CLI and REST:
//  - a master whose experiments are not team-readable: an experiment in
//    workspace nlp is read (experiment, trials, logs, metrics, checkpoints,
//    the model version registered from it) by its members and admins, and
//    refused to everyone else; the default workspace widens nothing; users
//    list only the workspaces they belong to; a model is listed to those who
//    own it or may read one of its versions, counting only those versions;
//  - a pool kept for named users is open to the members of a workspace
//    bound to it (experiments and commands), and its default binding places
//    configs that name no pool;
//  - moving an experiment (its owner; not another member), and the list's
//    project and workspace filters;
//  - a team-readable master: everyone reads everything; a fork stays in its
//    parent's project; a workspace that holds experiments is not deleted;
//  - a config's own workspace and project keys (Determined's) place it.
#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "tests/support/test_cluster.h"

namespace ring::testing::workspaces_e2e {
namespace {

using namespace std::chrono_literals;

std::string Config(const std::string& name, const std::string& extra = "") {
  return "name: " + name +
         "\n"
         "entrypoint: sh run.sh\n"
         "hyperparameters:\n"
         "  learning_rate: 0.05\n"
         "  batch_size: 32\n"
         "  report_every: 50\n"
         "  momentum: 0.0\n"
         "  checkpoint_every: 100\n"
         "searcher:\n"
         "  name: single\n"
         "  metric: validation_loss\n"
         "  max_length:\n"
         "    batches: 100\n"
         "max_restarts: 0\n" +
         extra;
}

class WorkspacesE2E : public ::testing::Test {
 protected:
  void Start(const std::string& master_yaml) {
    TestCluster::MasterOptions options;
    options.extra_args = {"--config", cluster_.WriteFile("master.yaml", master_yaml)};
    cluster_.StartMaster(options);
    for (const char* user : {"ada", "bob", "carol"})
      tokens_[user] = cluster_.CreateUser(user, std::string(user) + "-password");
  }
  // The HTTP status `user` ("admin" for the admin) gets for GET `target`.
  int StatusOf(const std::string& user, const std::string& target, nlohmann::json* body = nullptr) {
    auto http = cluster_.NewClient();
    http->SetBearerToken(user == "admin" ? cluster_.admin_token() : tokens_.at(user));
    auto res = http->Request("GET", target, "");
    if (!res.ok()) return -1;
    if (body) *body = nlohmann::json::parse(res->body, nullptr, false);
    return res->status;
  }
  CommandResult As(const std::string& user, std::vector<std::string> args) {
    if (user == "admin") return cluster_.Ring(std::move(args));
    return cluster_.RingAs(user, tokens_.at(user), std::move(args));
  }
  std::string Model() const { return BinDir() + "/../examples/quadratic/model"; }
  // Creates an experiment as `user`; its id (0 after a failure).
  int64_t Submit(const std::string& user, const std::string& yaml, std::vector<std::string> flags) {
    std::vector<std::string> args = {"experiment", "create", cluster_.WriteFile("e.yaml", yaml), Model()};
    args.insert(args.end(), flags.begin(), flags.end());
    auto made = As(user, args);
    EXPECT_EQ(made.exit_code, 0) << made.out << made.err;
    if (made.exit_code != 0) return 0;
    // The newest experiment (the admin lists them all).
    auto newest = cluster_.GetJson("/api/v1/experiments?sort=id&order=desc&limit=1");
    return newest["experiments"].empty() ? 0 : newest["experiments"][0]["id"].get<int64_t>();
  }
  TestCluster cluster_;
  std::map<std::string, std::string> tokens_;
};

TEST_F(WorkspacesE2E, PrivateMasterReadsByWorkspaceAndOpensPoolsByBinding) {
  Start(
      "experiments_team_readable: false\n"
      "resource_pools:\n"
      "  - name: default\n"
      "  - name: reserved\n"
      "    allowed_users: [nobody]\n");
  cluster_.StartAgent("agent-1", 1);

  // The admin makes nlp and its ADMIN ada; ada adds bob and a project.
  ASSERT_EQ(As("admin", {"workspace", "create", "nlp", "--description", "language"}).exit_code, 0);
  ASSERT_EQ(As("admin", {"workspace", "member", "add", "nlp", "ada", "--role", "ADMIN"}).exit_code, 0);
  auto by_carol = As("carol", {"workspace", "member", "add", "nlp", "carol"});
  EXPECT_NE(by_carol.exit_code, 0) << "carol belongs to no nlp: " << by_carol.out;
  ASSERT_EQ(As("ada", {"workspace", "member", "add", "nlp", "bob"}).exit_code, 0);
  auto project = As("bob", {"project", "create", "nlp", "bert"});
  ASSERT_EQ(project.exit_code, 0) << project.out << project.err;

  // Users see the workspaces they belong to; admins see all.
  nlohmann::json listed;
  ASSERT_EQ(StatusOf("carol", "/api/v1/workspaces", &listed), 200);
  EXPECT_EQ(listed["total"], 1) << listed.dump();
  ASSERT_EQ(StatusOf("bob", "/api/v1/workspaces", &listed), 200);
  EXPECT_EQ(listed["total"], 2) << listed.dump();
  EXPECT_EQ(StatusOf("carol", "/api/v1/workspaces/2"), 404);

  // ada's experiment in nlp/bert runs to its end.
  const int64_t exp = Submit("ada", Config("in-nlp"), {"--project", "nlp/bert", "--follow"});
  ASSERT_GT(exp, 0);
  nlohmann::json view;
  ASSERT_EQ(StatusOf("admin", "/api/v1/experiments/" + std::to_string(exp), &view), 200);
  EXPECT_EQ(view["workspace"], "nlp") << view.dump();
  EXPECT_EQ(view["project"], "bert");
  EXPECT_EQ(view["state"], "COMPLETED");
  const auto trial = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"][0];
  const std::string trial_path = "/api/v1/trials/" + std::to_string(trial["id"].get<int64_t>());
  const std::string uuid = trial["latest_checkpoint"].get<std::string>();
  ASSERT_FALSE(uuid.empty()) << trial.dump();
  ASSERT_EQ(As("ada", {"model", "create", "bert-model"}).exit_code, 0);
  ASSERT_EQ(As("ada", {"model", "register-version", "bert-model", uuid}).exit_code, 0);

  // One rule for every reading: members and admins through, others 403.
  const std::string e = "/api/v1/experiments/" + std::to_string(exp);
  for (const std::string& target :
       {e, e + "/trials", e + "/checkpoints", e + "/metrics", trial_path, trial_path + "/logs",
        trial_path + "/metrics?kind=validation", trial_path + "/checkpoints", "/api/v1/checkpoints/" + uuid,
        std::string("/api/v1/models/bert-model/versions/1")}) {
    EXPECT_EQ(StatusOf("carol", target), 403) << target;
    EXPECT_EQ(StatusOf("bob", target), 200) << target;
    EXPECT_EQ(StatusOf("admin", target), 200) << target;
  }
  ASSERT_EQ(StatusOf("carol", "/api/v1/experiments", &listed), 200);
  EXPECT_EQ(listed["total"], 0) << "carol lists none of it";
  ASSERT_EQ(StatusOf("bob", "/api/v1/experiments", &listed), 200);
  EXPECT_EQ(listed["total"], 1);
  auto download = As("carol", {"checkpoint", "download", uuid, cluster_.dir() + "/carol-download"});
  EXPECT_NE(download.exit_code, 0) << download.out;

  // Models: a non-admin sees one they own or with a version they may read,
  // and its num_versions counts only those. carol's own experiment (in the
  // default workspace: hers and the admins' only) gives the admin's model
  // "mixed" a second version beside nlp's.
  EXPECT_EQ(StatusOf("carol", "/api/v1/models/bert-model"), 403);
  EXPECT_EQ(StatusOf("carol", "/api/v1/models/bert-model/versions"), 403);
  EXPECT_EQ(StatusOf("bob", "/api/v1/models/bert-model"), 200);
  const int64_t carols = Submit("carol", Config("carols"), {"--follow"});
  ASSERT_GT(carols, 0);
  const std::string carols_uuid = cluster_
                                      .GetJson("/api/v1/experiments/" + std::to_string(carols) +
                                               "/trials")["trials"][0]["latest_checkpoint"]
                                      .get<std::string>();
  ASSERT_EQ(As("carol", {"model", "create", "carol-empty"}).exit_code, 0);
  ASSERT_EQ(As("admin", {"model", "create", "mixed"}).exit_code, 0);
  ASSERT_EQ(As("admin", {"model", "register-version", "mixed", uuid}).exit_code, 0);
  ASSERT_EQ(As("admin", {"model", "register-version", "mixed", carols_uuid}).exit_code, 0);
  const auto models_of = [&](const std::string& user) {
    nlohmann::json list;
    EXPECT_EQ(StatusOf(user, "/api/v1/models", &list), 200);
    std::map<std::string, int64_t> seen;  // name: num_versions
    for (const auto& m : list["models"]) seen[m["name"]] = m["num_versions"].get<int64_t>();
    EXPECT_EQ(list["total"], seen.size()) << user << ": " << list.dump();
    return seen;
  };
  using Seen = std::map<std::string, int64_t>;
  EXPECT_EQ(models_of("admin"), (Seen{{"bert-model", 1}, {"carol-empty", 0}, {"mixed", 2}}));
  EXPECT_EQ(models_of("bob"), (Seen{{"bert-model", 1}, {"mixed", 1}}));
  EXPECT_EQ(models_of("carol"), (Seen{{"carol-empty", 0}, {"mixed", 1}}));
  nlohmann::json one;
  ASSERT_EQ(StatusOf("carol", "/api/v1/models/mixed", &one), 200);
  EXPECT_EQ(one["num_versions"], 1) << one.dump();
  ASSERT_EQ(StatusOf("carol", "/api/v1/models/mixed/versions", &one), 200);
  EXPECT_EQ(one["total"], 1) << one.dump();
  EXPECT_EQ(one["model"]["num_versions"], 1) << one.dump();
  EXPECT_EQ(StatusOf("bob", "/api/v1/models/carol-empty"), 403);
  EXPECT_EQ(StatusOf("carol", "/api/v1/models/carol-empty"), 200);
  auto carol_cli = As("carol", {"model", "list"});
  EXPECT_EQ(carol_cli.out.find("bert-model"), std::string::npos) << carol_cli.out;

  // The pool kept for "nobody": refused until a cluster admin binds it to nlp.
  const std::string in_reserved = Config("reserved", "resources:\n  resource_pool: reserved\n");
  auto refused =
      As("bob", {"experiment", "create", cluster_.WriteFile("r.yaml", in_reserved), Model(), "--paused"});
  EXPECT_NE(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.err.find("members of workspaces bound to it"), std::string::npos) << refused.err;
  auto command = As("bob", {"cmd", "run", "-d", "--pool", "reserved", "--", "true"});
  EXPECT_NE(command.exit_code, 0) << "a command too: " << command.out;
  auto by_ada = As("ada", {"workspace", "pool", "bind", "nlp", "reserved", "--default"});
  EXPECT_NE(by_ada.exit_code, 0) << "only a cluster admin binds a pool kept for named users";
  ASSERT_EQ(As("admin", {"workspace", "pool", "bind", "nlp", "reserved", "--default"}).exit_code, 0);
  const int64_t named = Submit("bob", in_reserved, {"--paused"});
  command = As("bob", {"cmd", "run", "-d", "--pool", "reserved", "--", "true"});
  EXPECT_EQ(command.exit_code, 0) << "commands follow the binding too: " << command.out << command.err;
  ASSERT_GT(named, 0) << "bob is a member of nlp, bound to reserved";
  const int64_t placed = Submit("bob", Config("placed"), {"--project", "nlp/bert", "--paused"});
  ASSERT_GT(placed, 0);
  EXPECT_EQ(cluster_.GetJson("/api/v1/experiments/" + std::to_string(placed))["resources"]["resource_pool"],
            "reserved")
      << "nlp's default pool";
  const int64_t elsewhere = Submit("bob", Config("elsewhere"), {"--paused"});
  EXPECT_EQ(
      cluster_.GetJson("/api/v1/experiments/" + std::to_string(elsewhere))["resources"]["resource_pool"],
      "default")
      << "the default project's workspace binds no pool";
  auto carol_refused =
      As("carol", {"experiment", "create", cluster_.WriteFile("c.yaml", in_reserved), Model(), "--paused"});
  EXPECT_NE(carol_refused.exit_code, 0) << carol_refused.out;

  // Filters.
  nlohmann::json filtered;
  ASSERT_EQ(StatusOf("admin", "/api/v1/experiments?workspace_id=2", &filtered), 200);
  EXPECT_EQ(filtered["total"], 2) << filtered.dump();
  auto cli_list = As("admin", {"--json", "experiment", "list", "--project", "nlp/bert"});
  ASSERT_EQ(cli_list.exit_code, 0) << cli_list.err;
  EXPECT_EQ(nlohmann::json::parse(cli_list.out)["total"], 2) << cli_list.out;
  cli_list = As("admin", {"--json", "experiment", "list", "--project", "1"});
  EXPECT_EQ(nlohmann::json::parse(cli_list.out)["total"], 3) << "elsewhere, named, carols: " << cli_list.out;

  // A new member lists the workspace's experiments at once (the cached list
  // follows membership); carol's own is listed before and after.
  ASSERT_EQ(StatusOf("carol", "/api/v1/experiments", &listed), 200);
  EXPECT_EQ(listed["total"], 1) << listed.dump();
  ASSERT_EQ(As("ada", {"workspace", "member", "add", "nlp", "carol"}).exit_code, 0);
  ASSERT_EQ(StatusOf("carol", "/api/v1/experiments", &listed), 200);
  EXPECT_EQ(listed["total"], 3) << listed.dump();

  // Moving: not by another member; by the owner, to the default project,
  // where the default workspace widens nothing: bob reads it no more.
  auto bob_moves = As("bob", {"experiment", "move", std::to_string(exp), "--project", "1"});
  EXPECT_NE(bob_moves.exit_code, 0) << bob_moves.out;
  auto moved =
      As("ada", {"experiment", "move", std::to_string(exp), "--project", "Uncategorized/Uncategorized"});
  ASSERT_EQ(moved.exit_code, 0) << moved.out << moved.err;
  EXPECT_EQ(cluster_.GetJson(e)["project_id"], 1);
  EXPECT_EQ(StatusOf("bob", e), 403);
  EXPECT_EQ(StatusOf("ada", e), 200);
  EXPECT_EQ(StatusOf("admin", e), 200);
}

// Where experiments are not team-readable, the job queue still shows every
// job's place, slots and reason, but whose it is and which experiment only
// to those who may read it.
TEST_F(WorkspacesE2E, PrivateMasterShowsOthersJobsWithoutTheirOwners) {
  Start("experiments_team_readable: false\n");
  cluster_.StartAgent("agent-1", 1);
  ASSERT_EQ(As("admin", {"workspace", "create", "nlp"}).exit_code, 0);
  for (const char* user : {"ada", "bob"})
    ASSERT_EQ(As("admin", {"workspace", "member", "add", "nlp", user}).exit_code, 0);
  ASSERT_EQ(As("ada", {"project", "create", "nlp", "text"}).exit_code, 0);
  // ada's command takes the one slot; her trial in nlp and carol's command wait.
  ASSERT_EQ(As("ada", {"cmd", "run", "-d", "--", "sleep", "120"}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_.GetJson("/api/v1/jobs")["jobs"].size() == 1; },
                                   std::chrono::seconds(30)));
  const int64_t exp = Submit("ada", Config("queued"), {"--project", "nlp/text"});
  ASSERT_GT(exp, 0);
  ASSERT_EQ(As("carol", {"cmd", "run", "-d", "--", "sleep", "120"}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_.GetJson("/api/v1/jobs")["jobs"].size() == 3; },
                                   std::chrono::seconds(30)));

  // (owner, experiment_id) of each job as `user` sees the queue, in order.
  auto seen = [&](const std::string& user) {
    nlohmann::json body;
    EXPECT_EQ(StatusOf(user, "/api/v1/jobs", &body), 200);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& j : body["jobs"]) {
      EXPECT_EQ(j.value("private", false), j["owner"] == "") << j.dump();
      EXPECT_GT(j["slots"].get<int64_t>(), 0) << "the place and size stay: " << j.dump();
      out.emplace_back(j["owner"].get<std::string>(), j["experiment_id"].dump());
    }
    std::sort(out.begin(), out.end());  // fair share decides which waiting job goes first
    return out;
  };
  using Jobs = std::vector<std::pair<std::string, std::string>>;
  const std::string e = std::to_string(exp);
  EXPECT_EQ(seen("admin"), (Jobs{{"ada", e}, {"ada", "null"}, {"carol", "null"}}));
  EXPECT_EQ(seen("bob"), (Jobs{{"", "null"}, {"", "null"}, {"ada", e}})) << "bob reads nlp's experiments";
  EXPECT_EQ(seen("carol"), (Jobs{{"", "null"}, {"", "null"}, {"carol", "null"}}));
  auto listed = As("carol", {"job", "list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("(private)"), std::string::npos) << listed.out;
  EXPECT_EQ(listed.out.find("ada"), std::string::npos) << listed.out;
}

TEST_F(WorkspacesE2E, TeamReadableMasterLetsEveryUserReadAndKeepsBusyWorkspaces) {
  Start("");
  ASSERT_EQ(As("admin", {"workspace", "create", "cv"}).exit_code, 0);
  ASSERT_EQ(As("admin", {"workspace", "member", "add", "cv", "ada"}).exit_code, 0);
  ASSERT_EQ(As("ada", {"project", "create", "cv", "mnist"}).exit_code, 0);
  auto not_member = As("carol", {"experiment", "create", cluster_.WriteFile("n.yaml", Config("no")), Model(),
                                 "--project", "2", "--paused"});
  EXPECT_NE(not_member.exit_code, 0) << "carol is not a member of cv: " << not_member.out;
  const int64_t exp = Submit("ada", Config("in-cv"), {"--project", "cv/mnist", "--paused"});
  ASSERT_GT(exp, 0);
  const std::string e = "/api/v1/experiments/" + std::to_string(exp);
  for (const std::string& target : {e, e + "/trials", e + "/checkpoints"}) {
    EXPECT_EQ(StatusOf("carol", target), 200) << target;
    EXPECT_EQ(StatusOf("bob", target), 200) << target;
  }
  // A fork stays beside its parent.
  auto fork = As("ada", {"experiment", "fork", std::to_string(exp), "--paused"});
  ASSERT_EQ(fork.exit_code, 0) << fork.out << fork.err;
  auto newest = cluster_.GetJson("/api/v1/experiments?sort=id&order=desc&limit=1")["experiments"][0];
  EXPECT_EQ(newest["forked_from"], exp);
  EXPECT_EQ(newest["project"], "mnist") << newest.dump();
  const int64_t forked = newest["id"].get<int64_t>();
  nlohmann::json listed;
  ASSERT_EQ(StatusOf("carol", "/api/v1/experiments", &listed), 200);
  EXPECT_EQ(listed["total"], 2);

  // A workspace or project holding an experiment stays; empty, it goes.
  EXPECT_NE(As("admin", {"workspace", "delete", "cv"}).exit_code, 0);
  EXPECT_NE(As("ada", {"project", "delete", "cv/mnist"}).exit_code, 0);
  ASSERT_EQ(As("ada", {"experiment", "move", std::to_string(exp), "--project", "1"}).exit_code, 0);
  ASSERT_EQ(As("ada", {"experiment", "move", std::to_string(forked), "--project", "1"}).exit_code, 0);
  ASSERT_EQ(As("ada", {"project", "archive", "cv/mnist"}).exit_code, 0);
  auto into_archived = As("ada", {"experiment", "move", std::to_string(exp), "--project", "cv/mnist"});
  EXPECT_NE(into_archived.exit_code, 0) << into_archived.out;
  ASSERT_EQ(As("ada", {"project", "delete", "cv/mnist"}).exit_code, 0);
  // Renamed, by the workspace's ADMIN only; a project by its creator too.
  ASSERT_EQ(As("ada", {"project", "create", "cv", "digits"}).exit_code, 0);
  auto renamed = As("ada", {"project", "edit", "cv/digits", "--name", "mnist2", "--description", "d"});
  ASSERT_EQ(renamed.exit_code, 0) << renamed.out << renamed.err;
  EXPECT_EQ(As("carol", {"project", "edit", "cv/mnist2", "--name", "x"}).exit_code, 1) << "not carol's";
  EXPECT_NE(As("ada", {"project", "edit", "cv/mnist2"}).exit_code, 0) << "nothing to change";
  EXPECT_NE(As("ada", {"workspace", "edit", "cv", "--name", "vision"}).exit_code, 0) << "ada is a MEMBER";
  ASSERT_EQ(As("admin", {"workspace", "edit", "cv", "--name", "vision", "--description", "images"}).exit_code,
            0);
  nlohmann::json edited;
  ASSERT_EQ(StatusOf("admin", "/api/v1/workspaces/2", &edited), 200);
  EXPECT_EQ(edited["name"], "vision");
  EXPECT_EQ(edited["description"], "images");
  ASSERT_EQ(As("ada", {"project", "delete", "vision/mnist2"}).exit_code, 0);
  ASSERT_EQ(As("admin", {"workspace", "delete", "vision"}).exit_code, 0);
  EXPECT_EQ(StatusOf("admin", "/api/v1/workspaces/2"), 404);
}

// Determined's `workspace` and `project` keys place the experiment as
// --project does; an explicit --project wins; a project that does not
// exist, or one the user may not use, is refused naming the keys.
TEST_F(WorkspacesE2E, ConfigNamesItsWorkspaceAndProject) {
  Start("");
  ASSERT_EQ(As("admin", {"workspace", "create", "cv"}).exit_code, 0);
  ASSERT_EQ(As("admin", {"workspace", "member", "add", "cv", "ada"}).exit_code, 0);
  ASSERT_EQ(As("ada", {"project", "create", "cv", "mnist"}).exit_code, 0);
  ASSERT_EQ(As("ada", {"project", "create", "cv", "other"}).exit_code, 0);
  const std::string named = Config("named", "workspace: cv\nproject: mnist\n");
  auto project_of = [&](int64_t id) {
    return cluster_.GetJson("/api/v1/experiments/" + std::to_string(id))["project"].get<std::string>();
  };
  const int64_t in_config = Submit("ada", named, {"--paused"});
  ASSERT_GT(in_config, 0);
  EXPECT_EQ(project_of(in_config), "mnist");
  const int64_t by_flag = Submit("ada", named, {"--project", "cv/other", "--paused"});
  ASSERT_GT(by_flag, 0);
  EXPECT_EQ(project_of(by_flag), "other") << "the flag wins over the config";

  auto refused = [&](const std::string& user, const std::string& yaml) {
    auto made = As(user, {"experiment", "create", cluster_.WriteFile("r.yaml", yaml), Model(), "--paused"});
    EXPECT_NE(made.exit_code, 0) << made.out;
    return made.out + made.err;
  };
  const std::string stranger = refused("carol", named);
  EXPECT_NE(stranger.find("workspace/project: project \"cv/mnist\" not found"), std::string::npos)
      << stranger;
  const std::string missing = refused("ada", Config("missing", "workspace: cv\nproject: nope\n"));
  EXPECT_NE(missing.find("workspace/project: project \"cv/nope\" not found"), std::string::npos) << missing;
  const std::string alone = refused("ada", Config("alone", "workspace: cv\n"));
  EXPECT_NE(alone.find("project is required with workspace"), std::string::npos) << alone;
  // The dry run answers the same, 400 naming the keys.
  auto http = cluster_.NewClient();
  http->SetBearerToken(tokens_.at("carol"));
  auto check = http->Request("POST", "/api/v1/experiments/check", nlohmann::json{{"config", named}}.dump());
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->status, 400) << check->body;
  EXPECT_NE(check->body.find("workspace/project"), std::string::npos) << check->body;
}

}  // namespace
}  // namespace ring::testing::workspaces_e2e
