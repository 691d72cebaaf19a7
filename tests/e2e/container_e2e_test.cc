// Trials in containers (docs/containers.md) on a real master and agent:
//  - an experiment with environment.image is refused at submit, naming the
//    pool and the key's line, by a pool whose agents have no container
//    runtime or not the one the pool requires; `ring config check` says the
//    same and `ring agent list` shows the agents' runtimes ("none");
//  - the quadratic example runs inside a small image built here (the files
//    it needs, `podman import`ed, cached by content hash), its rank is killed
//    mid-training and resumes from its checkpoint with the same final
//    validation loss and checkpoint bytes as an uninterrupted run, and no
//    container is left behind; a linked owner's rank writes its files as
//    that account; an image that is neither stored nor
//    pullable ends the trial saying so; in a pool of an agent without a
//    runtime and one with podman, trials with an image run only on the
//    latter and wait for it, saying so. Skips, saying why, where podman
//    cannot run;
//  - with a fake podman whose pull sleeps, the agent keeps heartbeating and
//    running other trials while it pulls, the trial shows it is pulling, and
//    a kill during the pull ends the pull and the trial.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/raw_websocket.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::container_e2e {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string Experiment(const std::string& name, const std::string& pool, const std::string& extra) {
  return "name: " + name +
         "\n"
         "entrypoint: sh run.sh\n"
         "hyperparameters:\n"
         "  learning_rate: 0.05\n  batch_size: 32\n  report_every: 50\n  momentum: 0.9\n"
         "  checkpoint_every: 100\n  batch_sleep_ms: 0\n"
         "searcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: 500\n"
         "resources:\n  resource_pool: " +
         pool + "\n" + extra;
}

TEST(ContainerE2E, PoolsThatCannotRunAnImageRefuseItAtSubmit) {
  TestCluster cluster;
  const std::string master_yaml = cluster.WriteFile(
      "master.yaml",
      "resource_pools:\n  - name: default\n  - name: dockers\n    container_runtime: docker\n");
  cluster.StartMaster({.extra_args = {"--config", master_yaml}});
  cluster.StartAgent("plain", 1, {.extra_args = {"--container-runtimes", "none"}});
  cluster.StartAgent("docker-less", 1, {.extra_args = {"--pool", "dockers", "--container-runtimes", "none"}});
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return cluster.GetJson("/api/v1/agents")["agents"].size() == 2; }, 20s));
  const std::string model = cluster.MakeModelDir("model", {{"run.sh", "#!/bin/sh\n"}});

  // The image is on line 18 of the config (after the pool on line 16).
  const std::string image = "environment:\n  image: localhost/quadratic:1\n";
  const auto to_default = cluster.Ring(
      {"experiment", "create", cluster.WriteFile("d.yaml", Experiment("d", "default", image)), model});
  EXPECT_NE(to_default.exit_code, 0);
  EXPECT_NE(to_default.err.find("experiment.yaml:18: environment.image: pool default cannot run containers"),
            std::string::npos)
      << to_default.out << to_default.err;
  const auto to_dockers = cluster.Ring(
      {"experiment", "create", cluster.WriteFile("k.yaml", Experiment("k", "dockers", image)), model});
  EXPECT_NE(to_dockers.exit_code, 0);
  EXPECT_NE(to_dockers.err.find("pool dockers runs containers with docker"), std::string::npos)
      << to_dockers.out << to_dockers.err;
  // The check says the same, at the same line.
  const auto checked =
      cluster.Ring({"config", "check", cluster.WriteFile("c.yaml", Experiment("c", "default", image))});
  EXPECT_NE(checked.exit_code, 0);
  EXPECT_NE(checked.out.find("c.yaml:18: error: environment.image: pool default cannot run containers"),
            std::string::npos)
      << checked.out << checked.err;
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments")["total"], 0);
  // Without an image the same pool takes it.
  const auto bare = cluster.Ring(
      {"experiment", "create", cluster.WriteFile("b.yaml", Experiment("b", "default", "")), model});
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  // The agents say they have no runtime.
  const auto agents = cluster.Ring({"agent", "list"});
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  EXPECT_NE(agents.out.find("CONTAINERS"), std::string::npos) << agents.out;
  const auto listed = cluster.GetJson("/api/v1/agents")["agents"];  // a copy: the answer is a temporary
  ASSERT_EQ(listed.size(), 2u);
  for (const auto& a : listed) EXPECT_TRUE(a["container_runtimes"].empty()) << a.dump();
}

// A fake podman on the agent's PATH: it answers `info`, has no image, and
// pulls for a minute (writing its pid to <dir>/pull.pid first).
std::string FakePodmanDir(TestCluster& cluster) {
  const std::string dir = cluster.dir() + "/fake-podman";
  fs::create_directories(dir);
  const std::string script =
      "#!/bin/sh\n"
      "case \"$1\" in\n"
      "  info) echo '{\"version\":{\"Version\":\"4.3.1\"},\"host\":{\"security\":{\"rootless\":false},"
      "\"ociRuntime\":{\"name\":\"runc\"}}}' ;;\n"
      "  image) exit 1 ;;\n"
      "  pull) echo $$ > " +
      dir +
      "/pull.pid; exec sleep 60 ;;\n"
      "  *) exit 0 ;;\n"
      "esac\n";
  const std::string path = dir + "/podman";
  std::ofstream(path) << script;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  return dir;
}

TEST(ContainerE2E, APullKeepsTheAgentServingAndAKillEndsIt) {
  TestCluster cluster;
  cluster.StartMaster({.heartbeat_timeout_ms = 1500, .reconnect_window_ms = 1500});
  const std::string fake = FakePodmanDir(cluster);
  const char* path = std::getenv("PATH");
  cluster.StartAgent("puller", 2, {.env = {{"PATH", fake + ":" + (path ? path : "/usr/bin:/bin")}}});
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto agents = cluster.GetJson("/api/v1/agents")["agents"];
        return agents.size() == 1 && !agents[0]["container_runtimes"].empty();
      },
      20s))
      << cluster.GetJson("/api/v1/agents").dump();
  const std::string model = cluster.MakeModelDir("model", {{"run.sh", "#!/bin/sh\necho done\n"}});
  auto created = cluster.Ring({"--json", "experiment", "create",
                               cluster.WriteFile("p.yaml", Experiment("pulled", "default",
                                                                      "max_restarts: 0\nenvironment:\n  "
                                                                      "image: localhost/slow:1\n")),
                               model});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const int64_t exp = nlohmann::json::parse(created.out)["id"];
  const std::string pid_file = fake + "/pull.pid";
  ASSERT_TRUE(TestCluster::WaitFor([&] { return fs::exists(pid_file) && fs::file_size(pid_file) > 0; }, 20s));
  const int pull_pid = std::stoi(ReadFileText(pid_file));
  const auto trials = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
  ASSERT_EQ(trials.size(), 1u);
  const std::string trial = std::to_string(trials[0]["id"].get<int64_t>());
  // The trial says it is pulling, and its allocation is not running yet.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return cluster.Ring({"trial", "logs", trial})
                   .out.find("pulling image localhost/slow:1 with podman") != std::string::npos;
      },
      20s))
      << cluster.Ring({"trial", "logs", trial}).out;
  const auto during = cluster.GetJson("/api/v1/trials/" + trial + "/allocations")["allocations"];
  ASSERT_EQ(during.size(), 1u);
  EXPECT_NE(during[0]["state"], "RUNNING") << during.dump();
  // While it pulls, another trial runs on the agent's other slot to its
  // end, and the agent stays connected past twice the heartbeat timeout.
  auto other = cluster.Ring({"--json", "experiment", "create",
                             cluster.WriteFile("b.yaml", Experiment("bare", "default", "")), model});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const int64_t bare = nlohmann::json::parse(other.out)["id"];
  auto waited = cluster.Ring({"experiment", "wait", std::to_string(bare)});
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  std::this_thread::sleep_for(3s);
  const auto agents = cluster.GetJson("/api/v1/agents")["agents"];
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0]["state"], "connected") << agents.dump();
  EXPECT_EQ(::kill(pull_pid, 0), 0) << "the pull is still under way";
  // A kill ends the pull and the trial.
  ASSERT_EQ(cluster.Ring({"experiment", "kill", std::to_string(exp)}).exit_code, 0);
  EXPECT_TRUE(TestCluster::WaitFor([&] { return ::kill(pull_pid, 0) != 0; }, 15s))
      << "the pull was left running";
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto a = cluster.GetJson("/api/v1/trials/" + trial + "/allocations")["allocations"];
        return a.size() == 1 && a[0]["state"] == "TERMINATED";
      },
      15s))
      << cluster.GetJson("/api/v1/trials/" + trial + "/allocations").dump();
}

struct Outcome {
  double final_validation = 0;
  nlohmann::json final_checkpoint_files;
};

class ContainerTrialE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "rootful podman is what is tested here, and this test is not root";
    podman_ = FindPodman();
    if (podman_.empty())
      GTEST_SKIP() << "podman is not installed (deploy/install-deps.sh installs podman and runc)";
    const std::string model = BinDir() + "/../examples/quadratic/model";
    const auto built = RunCommand({"sh", SourceDir() + "/tests/e2e/data/quadratic_image.sh", podman_,
                                   model + "/quadratic_trial", model + "/libringtrial.so.0"},
                                  {}, 120s);
    if (built.exit_code != 0) GTEST_SKIP() << "podman cannot build the test image here: " << built.err;
    image_ = built.out.substr(0, built.out.find('\n'));
    // Podman must also run it: on hosts where the OCI runtime cannot start a
    // container (no runc, no cgroups), there is nothing to test.
    const auto ran =
        RunCommand({podman_, "--runtime", "runc", "run", "--rm", "--network", "host", "--ulimit",
                    "nofile=1024:1024", "--ulimit", "nproc=1000:1000", image_, "/bin/sh", "-c", "echo ok"},
                   {}, 60s);
    if (ran.out != "ok\n") GTEST_SKIP() << "podman cannot run a container here: " << ran.err;
    StartCluster();
    model_ = cluster_.MakeModelDir(
        "model", {{"run.sh", ReadFileText(SourceDir() + "/examples/quadratic/model/run.sh")}});
  }

  virtual void StartCluster() {
    cluster_.StartMaster({.heartbeat_timeout_ms = 1500, .reconnect_window_ms = 1500});
    cluster_.StartAgent(agent_, 1);
  }

  // The label value of this test's agent's containers (the agent's id and
  // work folder, as TestCluster starts it): other tests' agents on this host
  // run containers of their own at the same time.
  std::string Scope() const { return agent_ + "@" + cluster_.dir() + "/agent-" + agent_; }

  // The names of this test's agent's containers, running or not, of one
  // allocation or of all.
  std::vector<std::string> Containers(const std::string& allocation = "") {
    std::vector<std::string> args = {podman_, "ps", "--all", "--filter", "label=ring.agent=" + Scope()};
    if (!allocation.empty()) args.insert(args.end(), {"--filter", "label=ring.allocation=" + allocation});
    args.insert(args.end(), {"--format", "{{.Names}}"});
    const auto listed = RunCommand(args);
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    std::vector<std::string> names;
    std::stringstream lines(listed.out);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) names.push_back(line);
    return names;
  }

  void TearDown() override {
    if (podman_.empty()) return;
    // No container of this test's agent is left behind.
    EXPECT_TRUE(Containers().empty()) << ::testing::PrintToString(Containers());
  }

  static std::string FindPodman() {
    for (const char* path : {"/usr/bin/podman", "/usr/local/bin/podman"})
      if (::access(path, X_OK) == 0) return path;
    return "";
  }

  int64_t Submit(const std::string& name, int64_t batch_sleep_ms) {
    const std::string extra =
        "reproducibility:\n  experiment_seed: 7\nmax_restarts: 3\nmin_checkpoint_period:\n  batches: 100\n"
        "checkpoint_storage:\n  type: shared_fs\n  host_path: " +
        cluster_.dir() + "/master/checkpoints\n  storage_path: " + name +
        "\n  save_trial_best: 0\n  save_trial_latest: 1\n"
        "environment:\n  image: " +
        image_ + "\n  variables:\n    RING_EXAMPLES_BIN: /opt/quadratic\n";
    std::string config = Experiment(name, "default", extra);
    const std::string sleep = "batch_sleep_ms: 0";
    config.replace(config.find(sleep), sleep.size(), "batch_sleep_ms: " + std::to_string(batch_sleep_ms));
    auto created =
        cluster_.Ring({"--json", "experiment", "create", cluster_.WriteFile(name + ".yaml", config), model_});
    EXPECT_EQ(created.exit_code, 0) << created.out << created.err;
    auto j = nlohmann::json::parse(created.out, nullptr, false);
    return j.is_object() ? j.value("id", int64_t{0}) : 0;
  }

  int64_t TrialOf(int64_t exp) {
    auto trials = cluster_.GetJson("/api/v1/experiments/" + std::to_string(exp) + "/trials")["trials"];
    return trials.empty() ? 0 : trials[0]["id"].get<int64_t>();
  }

  nlohmann::json Allocations(int64_t trial) {
    return cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + "/allocations")["allocations"];
  }

  void WaitCompleted(int64_t exp) {
    auto waited = cluster_.Ring({"experiment", "wait", std::to_string(exp)});
    ASSERT_EQ(waited.exit_code, 0) << waited.out << waited.err
                                   << cluster_.Ring({"trial", "logs", std::to_string(TrialOf(exp))}).out;
  }

  Outcome Result(int64_t exp) {
    const std::string base = "/api/v1/trials/" + std::to_string(TrialOf(exp));
    auto validation = cluster_.GetJson(base + "/metrics?kind=validation")["metrics"];
    std::set<int64_t> seen;
    for (const auto& m : validation)
      EXPECT_TRUE(seen.insert(m["batches"].get<int64_t>()).second) << "stored twice";
    Outcome out;
    if (!validation.empty())
      out.final_validation = validation.back()["metrics"]["validation_loss"].get<double>();
    for (const auto& c :
         cluster_.GetJson(base + "/checkpoints").value("checkpoints", nlohmann::json::array()))
      if (c["state"] == "ACTIVE" && c["batches"] == 500) out.final_checkpoint_files = c["resources"];
    EXPECT_FALSE(out.final_checkpoint_files.empty()) << "no final checkpoint";
    return out;
  }

  TestCluster cluster_;
  std::string podman_;
  std::string image_;
  std::string model_;
  std::string agent_ = "agent-1";
};

TEST_F(ContainerTrialE2E, KilledRankInAContainerResumesFromItsCheckpointBitForBit) {
  // The agent found podman and says so.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto agents = cluster_.GetJson("/api/v1/agents")["agents"];
        return !agents.empty() && !agents[0]["container_runtimes"].empty() &&
               agents[0]["container_runtimes"][0]["name"] == "podman";
      },
      20s))
      << cluster_.GetJson("/api/v1/agents").dump();

  const int64_t baseline = Submit("baseline", 0);
  WaitCompleted(baseline);
  const Outcome want = Result(baseline);

  const int64_t exp = Submit("killed", 10);
  const int64_t trial = TrialOf(exp);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        for (const auto& c : cluster_.GetJson("/api/v1/trials/" + std::to_string(trial) + "/checkpoints")
                                 .value("checkpoints", nlohmann::json::array()))
          if (c["batches"].get<int64_t>() >= 100) return true;
        return false;
      },
      60s));
  // The rank's process dies inside its container, as an out-of-memory kill would.
  const auto running = Containers(Allocations(trial)[0]["id"].get<std::string>());
  ASSERT_EQ(running.size(), 1u) << ::testing::PrintToString(running);
  const auto killed = RunCommand({podman_, "kill", "--signal", "KILL", running[0]});
  ASSERT_EQ(killed.exit_code, 0) << "no running container " << running[0] << ": " << killed.err;
  WaitCompleted(exp);
  EXPECT_EQ(cluster_.GetJson("/api/v1/trials/" + std::to_string(trial))["restarts"], 1);
  const auto allocs = Allocations(trial);
  ASSERT_EQ(allocs.size(), 2u);
  const std::string reason = allocs[0]["exit_reason"];
  EXPECT_TRUE(reason == "rank 0 exited with code 137" || reason == "rank 0 killed by signal 9") << reason;
  const Outcome got = Result(exp);
  EXPECT_EQ(got.final_validation, want.final_validation);  // bitwise, not approximately
  EXPECT_EQ(got.final_checkpoint_files, want.final_checkpoint_files);
}

// A shell with an image runs in its container, in a terminal the runtime
// relays: what is typed runs inside (the image's /opt/quadratic is there),
// and killing it stops the container (TearDown: none left).
TEST_F(ContainerTrialE2E, AShellRunsInItsContainerInATerminal) {
  const std::string config = cluster_.WriteFile("shell.yaml", "environment:\n  image: " + image_ + "\n");
  auto started = cluster_.Ring({"shell", "start", "-d", "--config-file", config});
  ASSERT_EQ(started.exit_code, 0) << started.out << started.err;
  const std::string id = started.out.substr(0, started.out.find('\n'));
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return cluster_.GetJson("/api/v1/shells/" + id)["state"] == "RUNNING"; }, 60s));
  RawWebSocket terminal(PortOf(cluster_.url()), "/api/v1/shells/" + id + "/terminal?rows=30&cols=100",
                        {{"Authorization", "Bearer " + cluster_.admin_token()}});
  ASSERT_EQ(terminal.status(), 101);
  terminal.SendBinary("echo in-$((6*7)) /opt/quadratic/*\r");
  std::string screen;
  for (int i = 0; i < 40 && screen.find("quadratic_trial") == std::string::npos; ++i)
    if (auto frame = terminal.ReadFrame()) screen += *frame;
  EXPECT_NE(screen.find("in-42"), std::string::npos) << screen;
  EXPECT_NE(screen.find("quadratic_trial"), std::string::npos) << "not in the image: " << screen;
  ASSERT_EQ(cluster_.Ring({"shell", "kill", id}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !cluster_.GetJson("/api/v1/shells/" + id)["ended_at"].is_null(); }, 60s));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Containers().empty(); }, 30s));
}

TEST_F(ContainerTrialE2E, AnImageNeitherStoredNorPullableEndsTheTrialSayingWhy) {
  // Not in podman's store, and its registry (this host) does not answer.
  const std::string missing = "localhost/ring-missing:1";
  const std::string config =
      Experiment("missing", "default",
                 "max_restarts: 0\nenvironment:\n  image: " + missing + "\n  force_pull_image: true\n");
  auto created =
      cluster_.Ring({"--json", "experiment", "create", cluster_.WriteFile("m.yaml", config), model_});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const int64_t exp = nlohmann::json::parse(created.out)["id"];
  auto waited = cluster_.Ring({"experiment", "wait", std::to_string(exp)});
  EXPECT_NE(waited.exit_code, 0) << "the trial cannot run";
  const auto allocs = Allocations(TrialOf(exp));
  ASSERT_EQ(allocs.size(), 1u);
  const std::string reason = allocs[0]["exit_reason"];
  EXPECT_NE(reason.find("cannot pull image " + missing), std::string::npos) << reason;
}

// A pool of two agents, one without a runtime (a-plain, first by id and so
// best fit's choice among equals) and one with podman.
class ContainerMixedPoolE2E : public ContainerTrialE2E {
 protected:
  void StartCluster() override {
    cluster_.StartMaster({.heartbeat_timeout_ms = 1500, .reconnect_window_ms = 1500});
    cluster_.StartAgent("a-plain", 1, {.extra_args = {"--container-runtimes", "none"}});
    agent_ = "b-podman";
    cluster_.StartAgent(agent_, 1);
  }
};

TEST_F(ContainerMixedPoolE2E, TrialsWithAnImageRunOnlyOnTheAgentWithARuntime) {
  const int64_t first = Submit("first", 10);
  const int64_t second = Submit("second", 0);
  // The second waits for the podman agent, although a-plain is idle.
  bool said = false;
  std::string seen;  // the last non-empty job list, for the message
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto jobs = cluster_.GetJson("/api/v1/jobs")["jobs"];
        if (!jobs.empty()) seen = jobs.dump();
        for (const auto& j : jobs)
          if (j["experiment_id"] == second && j["state"] == "PENDING" && j["pending_reason"].is_string())
            said = said || j["pending_reason"].get<std::string>().find(
                               "only on agents with a container runtime (1 of 2 in pool default)") !=
                               std::string::npos;
        return said ||
               cluster_.GetJson("/api/v1/experiments/" + std::to_string(second))["state"] == "COMPLETED";
      },
      30s));
  EXPECT_TRUE(said) << seen;
  WaitCompleted(first);
  WaitCompleted(second);
  for (int64_t exp : {first, second})
    for (const auto& a : Allocations(TrialOf(exp)))
      for (const auto& p : a["placements"]) EXPECT_EQ(p["agent_id"], "b-podman") << a.dump();
}

// An agent that runs tasks as their owners, and a user linked to a Unix
// account made for the test (useradd; removed after it).
class ContainerOwnerE2E : public ContainerTrialE2E {
 protected:
  void StartCluster() override {
    account_ = "ringc_" + std::to_string(::getpid());
    RunCommand({"userdel", account_});
    const auto made = RunCommand({"useradd", "--system", "--no-create-home", "--user-group", "--shell",
                                  "/usr/sbin/nologin", "--home-dir", "/nonexistent", account_});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const passwd* pw = ::getpwnam(account_.c_str());
    ASSERT_NE(pw, nullptr);
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    // As a team sets them up: the folders above the work folder let accounts
    // pass, the checkpoint root lets each make its own folders (sticky).
    ASSERT_EQ(::chmod(cluster_.dir().c_str(), 0711), 0);
    checkpoints_ = cluster_.dir() + "/checkpoints";
    fs::create_directories(checkpoints_);
    ASSERT_EQ(::chmod(checkpoints_.c_str(), 01777), 0);
    cluster_.StartMaster(
        {.extra_args = {"--config",
                        cluster_.WriteFile("master.yaml", "checkpoint_root: " + checkpoints_ + "\n")}});
    agent_ = "owner-agent";
    cluster_.StartAgent(agent_, 1, {.run_as_owner = true, .extra_args = {"--unlinked-user", "nobody"}});
  }
  void TearDown() override {
    ContainerTrialE2E::TearDown();
    if (!account_.empty()) RunCommand({"userdel", account_});
  }
  std::string account_;
  std::string checkpoints_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

TEST_F(ContainerOwnerE2E, ALinkedOwnersRankRunsAsTheirAccountInsideTheContainer) {
  ASSERT_NE(uid_, 0u);
  const std::string token = cluster_.CreateUser("carol", "carol-password");
  ASSERT_EQ(cluster_.Ring({"user", "link-unix", "carol", "--unix-user", account_}).exit_code, 0);
  const std::string config = cluster_.WriteFile(
      "owned.yaml",
      Experiment("owned", "default",
                 "max_restarts: 0\nmin_checkpoint_period:\n  batches: 100\nenvironment:\n  image: " + image_ +
                     "\n  variables:\n    RING_EXAMPLES_BIN: /opt/quadratic\n"));
  auto created =
      RunCommand({BinDir() + "/ring", "-m", cluster_.url(), "--json", "experiment", "create", config, model_},
                 {{"RING_TOKEN", token}, {"XDG_CONFIG_HOME", cluster_.dir() + "/carol"}});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const int64_t exp = nlohmann::json::parse(created.out)["id"];
  WaitCompleted(exp);
  // What the trial wrote inside its container is the linked account's.
  int checked = 0;
  for (const auto& c : cluster_.GetJson("/api/v1/trials/" + std::to_string(TrialOf(exp)) + "/checkpoints")
                           .value("checkpoints", nlohmann::json::array())) {
    if (c.value("state", "") != "ACTIVE") continue;
    for (const auto& entry : fs::recursive_directory_iterator(checkpoints_))
      if (entry.path().filename() == c.value("uuid", "")) {
        struct stat st {};
        ASSERT_EQ(::lstat(entry.path().c_str(), &st), 0);
        EXPECT_EQ(st.st_uid, uid_) << entry.path();
        EXPECT_EQ(st.st_gid, gid_) << entry.path();
        for (const auto& file : fs::recursive_directory_iterator(entry.path())) {
          ASSERT_EQ(::lstat(file.path().c_str(), &st), 0);
          EXPECT_EQ(st.st_uid, uid_) << file.path();
          ++checked;
        }
      }
  }
  EXPECT_GT(checked, 0) << "no checkpoint file to check";
}

}  // namespace
}  // namespace ring::testing::container_e2e
