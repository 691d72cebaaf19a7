// The authorisation matrix: every route the master serves, called by
// nobody, a made-up token, another user, the owner, an admin, and trial
// processes (their own allocation's token and another allocation's), against
// a real master with a real agent running two trials. Each call must get the
// status its route's rule gives: 401, 403, or through (anything else).
// The route list is the router's own, so a new route without a rule here fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "master/api/routes.h"
#include "master/auth/accounts.h"
#include "master/store/memory_store.h"
#include "tests/support/lifecycle_driver.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::authorization {
namespace {

// Who may call a route.
enum class Rule {
  kPublic,           // anyone
  kRead,             // any signed-in user
  kOwned,            // the owner of the experiment, or an admin
  kWorkspaceAdmin,   // an ADMIN of the workspace (or the project's creator), or a cluster admin
  kAdminOnly,        // admins
  kWebhookAdmin,     // admins for cluster-wide webhooks, checked by the handler (a workspace's
                     // ADMINs for its webhooks: webhooks_e2e_test.cc)
  kSelfOrAdmin,      // the user named by the path, or an admin
  kTrial,            // the trial process of that allocation
  kClusterToken,     // agents holding the cluster token (no user or trial token does)
  kSlurmCredential,  // the submit helper holding a Slurm allocation's credential (no user or trial token
                     // does)
};

struct RouteRule {
  std::string method;
  std::string pattern;
  Rule rule;
  std::string body;  // sent as is ("" for none)
};

// Bodies are chosen so an allowed call changes nothing that matters to the
// rest of the matrix (a draining disable, an empty patch, no real reports).
const std::vector<RouteRule>& Rules() {
  static const std::vector<RouteRule> rules = {
      {"POST", "/api/v1/auth/login", Rule::kPublic, R"({"username":"ada","password":"ada-password"})"},
      {"POST", "/api/v1/auth/logout", Rule::kRead, ""},
      {"GET", "/api/v1/users/me", Rule::kRead, ""},
      {"GET", "/api/v1/users", Rule::kAdminOnly, ""},
      {"POST", "/api/v1/users", Rule::kAdminOnly, "{}"},
      {"GET", "/api/v1/users/{id}", Rule::kSelfOrAdmin, ""},
      {"PATCH", "/api/v1/users/{id}", Rule::kSelfOrAdmin, "{}"},
      {"GET", "/api/v1/openapi.json", Rule::kPublic, ""},
      {"GET", "/metrics", Rule::kPublic, ""},
      {"GET", "/api/v1/master/info", Rule::kRead, ""},
      {"GET", "/api/v1/master/backup", Rule::kAdminOnly, ""},
      {"POST", "/api/v1/master/retention", Rule::kAdminOnly, ""},
      {"GET", "/api/v1/health", Rule::kPublic, ""},
      {"GET", "/api/v1/agents", Rule::kRead, ""},
      {"GET", "/api/v1/jobs", Rule::kRead, ""},
      {"POST", "/api/v1/agents/{id}/disable", Rule::kAdminOnly, R"({"drain":true})"},
      {"POST", "/api/v1/agents/{id}/enable", Rule::kAdminOnly, ""},
      {"POST", "/api/v1/agents/enrol", Rule::kClusterToken, R"({"agent_id":"matrix","slots":1})"},
      {"GET", "/api/v1/slurm/grants/{allocation_id}", Rule::kSlurmCredential, ""},
      {"DELETE", "/api/v1/agents/{id}", Rule::kAdminOnly, ""},
      {"POST", "/api/v1/agents/{id}/slots", Rule::kAdminOnly, R"({"slots":1})"},
      {"POST", "/api/v1/master/cluster-token/rotate", Rule::kAdminOnly, ""},
      {"POST", "/api/v1/experiments", Rule::kRead, "{}"},
      {"POST", "/api/v1/experiments/check", Rule::kRead, "{}"},
      {"GET", "/api/v1/experiments", Rule::kRead, ""},
      {"GET", "/api/v1/experiments/{id}", Rule::kRead, ""},
      {"GET", "/api/v1/experiments/{id}/trials", Rule::kRead, ""},
      {"PATCH", "/api/v1/experiments/{id}", Rule::kOwned, "{}"},
      {"GET", "/api/v1/templates", Rule::kRead, ""},
      {"GET", "/api/v1/templates/{name}", Rule::kRead, ""},
      {"PUT", "/api/v1/templates/{name}", Rule::kRead, R"({"config":"max_restarts: 1\n"})"},
      {"DELETE", "/api/v1/templates/{name}", Rule::kRead, ""},
      // Webhooks 1 and 2 are cluster-wide (made below); DELETE names 2. The
      // create's URL is off this master's allow list: an admin's is a 400.
      {"GET", "/api/v1/webhooks", Rule::kRead, ""},
      {"POST", "/api/v1/webhooks", Rule::kWebhookAdmin,
       R"({"name":"m","url":"https://hooks.example.com/","triggers":[{"trigger_type":"TASK_LOG","condition":{"regex":"x"}}]})"},
      {"DELETE", "/api/v1/webhooks/{id}", Rule::kWebhookAdmin, ""},
      {"POST", "/api/v1/webhooks/{id}/test", Rule::kWebhookAdmin, ""},
      {"GET", "/api/v1/webhooks/{id}/deliveries", Rule::kRead, ""},
      // {name}: ada's model (made below); every write is its owner's or an
      // admin's. It has no versions, so the owner's version calls get 404
      // (and a 400 for the unknown checkpoint); deleting it comes last.
      {"POST", "/api/v1/models", Rule::kRead, R"({"name":"matrix-model"})"},
      {"GET", "/api/v1/models", Rule::kRead, ""},
      {"GET", "/api/v1/models/{name}", Rule::kRead, ""},
      {"PATCH", "/api/v1/models/{name}", Rule::kOwned, "{}"},
      {"GET", "/api/v1/models/{name}/versions", Rule::kRead, ""},
      {"POST", "/api/v1/models/{name}/versions", Rule::kOwned,
       R"({"checkpoint_uuid":"00000000-0000-4000-8000-000000000000"})"},
      {"GET", "/api/v1/models/{name}/versions/{version}", Rule::kRead, ""},
      {"PATCH", "/api/v1/models/{name}/versions/{version}", Rule::kOwned, R"({"notes":"n"})"},
      {"DELETE", "/api/v1/models/{name}/versions/{version}", Rule::kOwned, ""},
      {"DELETE", "/api/v1/models/{name}", Rule::kOwned, ""},
      // Experiment 3, which is active: its owner and admins get 409.
      {"DELETE", "/api/v1/experiments/{id}", Rule::kOwned, ""},
      {"POST", "/api/v1/experiments/{id}/{action}", Rule::kOwned, ""},
      {"GET", "/api/v1/trials/{id}", Rule::kRead, ""},
      {"GET", "/api/v1/trials/{id}/allocations", Rule::kRead, ""},
      {"GET", "/api/v1/trials/{id}/logs", Rule::kRead, ""},
      {"POST", "/api/v1/trials/{id}/kill", Rule::kOwned, ""},
      {"POST", "/api/v1/trials/{id}/continue", Rule::kRead, "{}"},  // 400: no length, nothing made
      {"GET", "/api/v1/trials/{id}/checkpoints", Rule::kRead, ""},
      {"GET", "/api/v1/experiments/{id}/checkpoints", Rule::kRead, ""},
      {"GET", "/api/v1/experiments/{id}/model_definition", Rule::kRead, ""},
      {"GET", "/api/v1/checkpoints/{uuid}", Rule::kRead, ""},
      {"GET", "/api/v1/checkpoints/{uuid}/download", Rule::kRead, ""},
      {"POST", "/api/v1/allocations/{id}/checkpoints", Rule::kTrial, "{}"},
      {"POST", "/api/v1/allocations/{id}/checkpoints/prepare", Rule::kTrial, ""},
      {"GET", "/api/v1/allocations/{id}/checkpoints/{uuid}", Rule::kTrial, ""},
      {"GET", "/api/v1/allocations/{id}/preemption", Rule::kTrial, ""},
      {"POST", "/api/v1/allocations/{id}/preemption/ack", Rule::kTrial, ""},
      {"GET", "/api/v1/allocations/{id}/searcher/operation", Rule::kTrial, ""},
      {"POST", "/api/v1/allocations/{id}/searcher/completed", Rule::kTrial, "{}"},
      {"POST", "/api/v1/allocations/{id}/searcher/invalid_hparams", Rule::kTrial, "{\"unknown\":1}"},
      {"POST", "/api/v1/allocations/{id}/metrics", Rule::kTrial, "{}"},
      {"GET", "/api/v1/allocations/{id}/model_definition", Rule::kTrial, ""},
      {"GET", "/api/v1/allocations/{id}/rendezvous", Rule::kTrial, ""},
      {"PUT", "/api/v1/allocations/{id}/rendezvous", Rule::kTrial, "v"},
      {"GET", "/api/v1/trials/{id}/metrics", Rule::kRead, ""},
      {"GET", "/api/v1/experiments/{id}/metrics", Rule::kRead, ""},
      {"GET", "/api/v1/pools", Rule::kRead, ""},
      {"POST", "/api/v1/tasks/{id}/proxy/link", Rule::kOwned, ""},
      {"POST", "/api/v1/allocations/{id}/proxy", Rule::kTrial, R"({"port":1})"},
      // {id}: a command of ada's, waiting (the trials hold the slots). Its
      // kill comes last, after every read of it.
      {"POST", "/api/v1/commands", Rule::kRead, R"({"argv":["true"],"slots":99})"},
      {"GET", "/api/v1/commands", Rule::kRead, ""},
      {"GET", "/api/v1/commands/{id}", Rule::kOwned, ""},
      {"GET", "/api/v1/commands/{id}/logs", Rule::kOwned, ""},
      {"POST", "/api/v1/commands/{id}/kill", Rule::kOwned, ""},
      // {id}: a shell of ada's, waiting like the command.
      {"POST", "/api/v1/shells", Rule::kRead, R"({"slots":99})"},
      {"GET", "/api/v1/shells", Rule::kRead, ""},
      {"GET", "/api/v1/shells/{id}", Rule::kOwned, ""},
      {"GET", "/api/v1/shells/{id}/logs", Rule::kOwned, ""},
      {"POST", "/api/v1/shells/{id}/terminal/ticket", Rule::kOwned, ""},
      {"POST", "/api/v1/shells/{id}/kill", Rule::kOwned, ""},
      {"POST", "/api/v1/notebooks", Rule::kRead, R"({"slots":99})"},
      {"GET", "/api/v1/notebooks", Rule::kRead, ""},
      {"GET", "/api/v1/notebooks/{id}", Rule::kOwned, ""},
      {"GET", "/api/v1/notebooks/{id}/logs", Rule::kOwned, ""},
      {"POST", "/api/v1/notebooks/{id}/kill", Rule::kOwned, ""},
      // Workspaces: {id} is one the admin made, ada its ADMIN, bob a MEMBER;
      // {id} of a project is ada's project there. The deletions come last
      // (ada's goes through: it holds no experiment).
      {"GET", "/api/v1/workspaces", Rule::kRead, ""},
      {"POST", "/api/v1/workspaces", Rule::kAdminOnly, R"({"name":"matrix-made"})"},
      {"GET", "/api/v1/workspaces/{id}", Rule::kRead, ""},
      {"PATCH", "/api/v1/workspaces/{id}", Rule::kWorkspaceAdmin, "{}"},
      {"PUT", "/api/v1/workspaces/{id}/members/{username}", Rule::kWorkspaceAdmin, R"({"role":"MEMBER"})"},
      {"DELETE", "/api/v1/workspaces/{id}/members/{username}", Rule::kWorkspaceAdmin, ""},
      {"PUT", "/api/v1/workspaces/{id}/pools/{pool}", Rule::kWorkspaceAdmin, R"({"default":false})"},
      {"DELETE", "/api/v1/workspaces/{id}/pools/{pool}", Rule::kWorkspaceAdmin, ""},
      {"GET", "/api/v1/workspaces/{id}/projects", Rule::kRead, ""},
      {"POST", "/api/v1/workspaces/{id}/projects", Rule::kRead, R"({"name":"matrix-more"})"},  // its members
      {"GET", "/api/v1/projects/{id}", Rule::kRead, ""},
      {"PATCH", "/api/v1/projects/{id}", Rule::kWorkspaceAdmin, "{}"},
      {"POST", "/api/v1/experiments/{id}/move", Rule::kOwned, R"({"project_id":1})"},
      {"DELETE", "/api/v1/projects/{id}", Rule::kWorkspaceAdmin, ""},
      {"DELETE", "/api/v1/workspaces/{id}", Rule::kWorkspaceAdmin, ""},
  };
  return rules;
}

enum class Caller { kNobody, kMadeUp, kOtherUser, kOwner, kAdmin, kOtherTrial, kOwnTrial };
const char* Name(Caller c) {
  static const char* names[] = {"nobody", "made-up token", "other user", "owner",
                                "admin",  "other trial",   "own trial"};
  return names[static_cast<int>(c)];
}

constexpr int kThrough = 0;  // authorised: any status but 401 and 403

int Expected(Rule rule, Caller c) {
  const bool user = c == Caller::kOtherUser || c == Caller::kOwner || c == Caller::kAdmin;
  switch (rule) {
    case Rule::kPublic:
      return kThrough;
    case Rule::kRead:
      return user ? kThrough : 401;
    case Rule::kOwned:
    case Rule::kWorkspaceAdmin:
    case Rule::kSelfOrAdmin:
      if (!user) return 401;
      return c == Caller::kOtherUser ? 403 : kThrough;
    case Rule::kAdminOnly:
    case Rule::kWebhookAdmin:
      if (!user) return 401;
      return c == Caller::kAdmin ? kThrough : 403;
    case Rule::kTrial:
      return c == Caller::kOwnTrial ? kThrough : 401;
    case Rule::kClusterToken:
    case Rule::kSlurmCredential:
      return 401;
  }
  return -1;
}

Access AccessOf(Rule rule) {
  switch (rule) {
    case Rule::kPublic:
    case Rule::kClusterToken:     // the handler checks the cluster token
    case Rule::kSlurmCredential:  // the handler checks the allocation's credential
      return Access::kPublic;
    case Rule::kAdminOnly:
      return Access::kAdmin;
    case Rule::kTrial:
      return Access::kAllocation;
    default:
      return Access::kUser;
  }
}

TEST(Authorization, EveryRouteHasARuleThatMatchesItsAccess) {
  MemoryStore store;
  testing::LifecycleDriver controller(store, testing::DriverOptions{});
  Accounts accounts(store);
  ApiContext ctx{store, controller.lifecycle(), controller.agents(), "test", &accounts};
  Router router;
  RegisterAllRoutes(router, ctx);
  std::set<std::string> served;
  for (const auto& r : router.Routes()) {
    served.insert(r.method + " " + r.pattern);
    auto it = std::find_if(Rules().begin(), Rules().end(), [&](const RouteRule& x) {
      return x.method == r.method && x.pattern == r.pattern;
    });
    ASSERT_NE(it, Rules().end()) << r.method << " " << r.pattern << " has no rule in this test";
    EXPECT_EQ(AccessOf(it->rule), r.access) << r.method << " " << r.pattern << " is " << AccessName(r.access);
  }
  for (const auto& x : Rules()) EXPECT_TRUE(served.contains(x.method + " " + x.pattern)) << x.pattern;
}

// Two trials that write their allocation id and token, then wait.
std::string SleeperModel(TestCluster& cluster) {
  return cluster.MakeModelDir(
      "sleeper", {{"run.sh", "echo \"$RING_ALLOCATION_ID $RING_ALLOCATION_TOKEN\" > \"" + cluster.dir() +
                                 "/alloc-$RING_EXPERIMENT_ID.tmp\"\nmv \"" + cluster.dir() +
                                 "/alloc-$RING_EXPERIMENT_ID.tmp\" \"" + cluster.dir() +
                                 "/alloc-$RING_EXPERIMENT_ID\"\nexec sleep 120\n"}});
}

constexpr const char* kSleeperConfig = R"(name: sleeper
entrypoint: sh run.sh
searcher:
  name: single
  metric: loss
  max_length:
    batches: 10
max_restarts: 0
)";

TEST(Authorization, MatrixOfEveryRouteAndCaller) {
  TestCluster cluster;
  // A port nothing listens on: a test event fails at once, on loopback.
  const std::string webhook_url = "http://127.0.0.1:9/";
  cluster.StartMaster(
      {.extra_args = {"--config", cluster.WriteFile("master.yaml", "webhooks:\n  allowed_urls: [\"" +
                                                                       webhook_url + "\"]\n")}});
  cluster.StartAgent("agent-1", 2);
  const std::string ada = cluster.CreateUser("ada", "ada-password");
  const std::string bob = cluster.CreateUser("bob", "bob-password");
  ASSERT_FALSE(ada.empty());
  ASSERT_FALSE(bob.empty());

  // Experiment 1 is ada's, experiment 2 the admin's; each runs one trial.
  const std::string model = SleeperModel(cluster);
  const std::string config = cluster.WriteFile("sleeper.yaml", kSleeperConfig);
  auto by_ada = RunCommand({BinDir() + "/ring", "-m", cluster.url(), "experiment", "create", config, model},
                           {{"RING_TOKEN", ada}});
  ASSERT_EQ(by_ada.exit_code, 0) << by_ada.out << by_ada.err;
  auto by_admin = cluster.Ring({"experiment", "create", config, model});
  ASSERT_EQ(by_admin.exit_code, 0) << by_admin.out << by_admin.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["owner"], "ada");
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/2")["owner"], "admin");
  std::map<int, std::pair<std::string, std::string>> alloc;  // experiment → (id, token)
  for (int exp : {1, 2}) {
    const std::string file = cluster.dir() + "/alloc-" + std::to_string(exp);
    ASSERT_TRUE(TestCluster::WaitFor([&] { return std::filesystem::exists(file); }, std::chrono::seconds(30)))
        << "the trial of experiment " << exp << " did not start";
    std::istringstream in(ReadFileText(file));
    in >> alloc[exp].first >> alloc[exp].second;
  }
  // Experiment 3 is ada's too; its trial waits (the slots are taken), and
  // is the one the matrix kills.
  auto third = RunCommand({BinDir() + "/ring", "-m", cluster.url(), "experiment", "create", config, model},
                          {{"RING_TOKEN", ada}});
  ASSERT_EQ(third.exit_code, 0) << third.out << third.err;
  const auto third_trials = cluster.GetJson("/api/v1/experiments/3/trials");
  ASSERT_EQ(third_trials["trials"].size(), 1u) << third_trials.dump();
  const int64_t killed_trial = third_trials["trials"][0]["id"];
  int64_t ada_id = 0;
  const auto users = cluster.GetJson("/api/v1/users");
  for (const auto& u : users["users"])
    if (u["username"] == "ada") ada_id = u["id"].get<int64_t>();
  ASSERT_GT(ada_id, 0) << users.dump();

  // A command of ada's, which waits: the two trials hold both slots.
  auto command =
      RunCommand({BinDir() + "/ring", "-m", cluster.url(), "cmd", "run", "-d", "--", "sleep", "60"},
                 {{"RING_TOKEN", ada}});
  ASSERT_EQ(command.exit_code, 0) << command.out << command.err;
  const int64_t command_id = std::atoll(command.out.c_str());
  ASSERT_GT(command_id, 0) << command.out;
  auto shell =
      RunCommand({BinDir() + "/ring", "-m", cluster.url(), "shell", "start", "-d"}, {{"RING_TOKEN", ada}});
  ASSERT_EQ(shell.exit_code, 0) << shell.out << shell.err;
  const int64_t shell_id = std::atoll(shell.out.c_str());
  ASSERT_GT(shell_id, 0) << shell.out;
  auto notebook =
      RunCommand({BinDir() + "/ring", "-m", cluster.url(), "notebook", "start", "-d"}, {{"RING_TOKEN", ada}});
  ASSERT_EQ(notebook.exit_code, 0) << notebook.out << notebook.err;
  const int64_t notebook_id = std::atoll(notebook.out.c_str());
  ASSERT_GT(notebook_id, 0) << notebook.out;

  // A model of ada's, for the model routes' {name}.
  auto ada_model = RunCommand({BinDir() + "/ring", "-m", cluster.url(), "model", "create", "ada-model"},
                              {{"RING_TOKEN", ada}});
  ASSERT_EQ(ada_model.exit_code, 0) << ada_model.out << ada_model.err;

  // A workspace of ada's (its ADMIN) where bob is a MEMBER, with a project of ada's.
  auto ws = cluster.client().Request("POST", "/api/v1/workspaces", R"({"name":"matrix-ws"})");
  ASSERT_TRUE(ws.ok() && ws->status == 201) << (ws.ok() ? ws->body : ws.status().ToString());
  const std::string ws_id = std::to_string(nlohmann::json::parse(ws->body)["id"].get<int64_t>());
  for (const auto& [who, role] : {std::pair{"ada", "ADMIN"}, std::pair{"bob", "MEMBER"}}) {
    auto added = cluster.client().Request("PUT", "/api/v1/workspaces/" + ws_id + "/members/" + who,
                                          std::string(R"({"role":")") + role + "\"}");
    ASSERT_TRUE(added.ok() && added->status == 200) << (added.ok() ? added->body : "");
  }
  auto ada_client = cluster.NewClient();
  ada_client->SetBearerToken(ada);
  auto project =
      ada_client->Request("POST", "/api/v1/workspaces/" + ws_id + "/projects", R"({"name":"matrix-p"})");
  ASSERT_TRUE(project.ok() && project->status == 201) << (project.ok() ? project->body : "");
  const std::string project_id = std::to_string(nlohmann::json::parse(project->body)["id"].get<int64_t>());

  // Two cluster-wide webhooks, on a line no trial prints.
  for (const char* name : {"matrix-1", "matrix-2"}) {
    auto hook = cluster.client().Request(
        "POST", "/api/v1/webhooks",
        nlohmann::json{
            {"name", name},
            {"url", webhook_url},
            {"triggers", {{{"trigger_type", "TASK_LOG"}, {"condition", {{"regex", "^never printed$"}}}}}}}
            .dump());
    ASSERT_TRUE(hook.ok() && hook->status == 201) << (hook.ok() ? hook->body : hook.status().ToString());
  }

  std::map<Caller, std::string> tokens = {
      {Caller::kNobody, ""},
      {Caller::kMadeUp, std::string(64, 'a')},
      {Caller::kOtherUser, bob},
      {Caller::kOwner, ada},
      {Caller::kAdmin, cluster.admin_token()},
      {Caller::kOtherTrial, alloc[2].second},
      {Caller::kOwnTrial, alloc[1].second},
  };
  int checked = 0;
  for (const auto& r : Rules()) {
    std::string path = r.pattern;
    auto fill = [&](const std::string& name, const std::string& value) {
      if (auto at = path.find(name); at != std::string::npos) path.replace(at, name.size(), value);
    };
    // Removing an agent or changing its slots would upset the rest of the
    // matrix: those calls name an agent that does not exist (404 for admins).
    if (r.method == "DELETE" && r.pattern == "/api/v1/experiments/{id}") fill("{id}", "3");
    if (r.pattern.starts_with("/api/v1/workspaces/")) {
      fill("{id}", ws_id);
      fill("{username}", r.method == "DELETE" ? "nobody-here" : "bob");
      fill("{pool}", "default");
    }
    if (r.pattern.starts_with("/api/v1/projects/")) fill("{id}", project_id);
    if (path.find("/webhooks/") != std::string::npos) fill("{id}", r.method == "DELETE" ? "2" : "1");
    if (r.method == "DELETE" || r.pattern.ends_with("/slots")) fill("{id}", "no-such-agent");
    if (path.find("/agents/") != std::string::npos) fill("{id}", "agent-1");
    if (path.find("/users/") != std::string::npos) fill("{id}", std::to_string(ada_id));
    if (path.find("/allocations/") != std::string::npos) fill("{id}", alloc[1].first);
    if (path.find("/commands/") != std::string::npos) fill("{id}", std::to_string(command_id));
    if (path.find("/shells/") != std::string::npos) fill("{id}", std::to_string(shell_id));
    if (r.pattern == "/api/v1/trials/{id}/kill") fill("{id}", std::to_string(killed_trial));
    if (path.find("/notebooks/") != std::string::npos) fill("{id}", std::to_string(notebook_id));
    if (r.pattern.starts_with("/api/v1/models/")) fill("{name}", "ada-model");
    fill("{version}", "1");
    fill("{id}", "1");  // experiment 1, trial 1
    fill("{action}", "unarchive");
    fill("{allocation_id}", alloc[1].first);  // a live allocation: its trial's token is no Slurm credential
    fill("{uuid}", "00000000-0000-4000-8000-000000000000");
    path += "?timeout_s=0&timeout_ms=0&key=k&keys=k";
    for (const auto& [caller, token] : tokens) {
      // Signing out ends the token: sign in afresh for that call.
      std::string used = token;
      if (r.pattern == "/api/v1/auth/logout" && caller == Caller::kOwner)
        used = cluster.SignIn("ada", "ada-password");
      if (r.pattern == "/api/v1/auth/logout" && caller == Caller::kOtherUser)
        used = cluster.SignIn("bob", "bob-password");
      if (r.pattern == "/api/v1/auth/logout" && caller == Caller::kAdmin)
        used = cluster.SignIn("admin", cluster.admin_password());
      auto http = cluster.NewClient(std::chrono::seconds(20));
      http->SetBearerToken(used);
      // Each caller sets and deletes a template of its own.
      std::string target = path;
      if (auto at = target.find("{name}"); at != std::string::npos)
        target.replace(at, 6, "matrix-" + std::to_string(static_cast<int>(caller)));
      auto res = http->Request(r.method, target, r.body);
      ASSERT_TRUE(res.ok()) << res.status().ToString();
      const int want = Expected(r.rule, caller);
      if (want == kThrough)
        EXPECT_TRUE(res->status != 401 && res->status != 403)
            << r.method << " " << target << " by " << Name(caller) << ": " << res->status << " " << res->body;
      else
        EXPECT_EQ(res->status, want) << r.method << " " << target << " by " << Name(caller) << ": "
                                     << res->body;
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(Rules().size() * tokens.size()));

  // A trial's token makes no command, and a command's own calls stay its own.
  auto by_trial = cluster.NewClient();
  by_trial->SetBearerToken(alloc[1].second);
  auto made = by_trial->Request("POST", "/api/v1/commands", R"({"argv":["true"]})");
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made->status, 401) << made->body;

  // The 403 says whose the experiment is.
  auto as_bob = cluster.NewClient();
  as_bob->SetBearerToken(bob);
  auto denied = as_bob->Request("POST", "/api/v1/experiments/1/kill", "");
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403);
  EXPECT_NE(denied->body.find("belongs to ada"), std::string::npos) << denied->body;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["state"], "ACTIVE");

  // The owner may, and an admin may end anyone's.
  auto as_ada = cluster.NewClient();
  as_ada->SetBearerToken(ada);
  auto killed = as_ada->Request("POST", "/api/v1/experiments/1/kill", "");
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->status, 200) << killed->body;
  auto admin_kill = cluster.client().Request("POST", "/api/v1/experiments/2/kill", "");
  ASSERT_TRUE(admin_kill.ok());
  EXPECT_EQ(admin_kill->status, 200) << admin_kill->body;
}

}  // namespace
}  // namespace ring::testing::authorization
