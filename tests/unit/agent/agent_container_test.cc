// Ranks in containers (docs/containers.md): what the agent reads from each
// runtime's own answer, the command lines it builds (pure functions), and
// what a runner with an image launches through a fake launcher at the
// process boundary: the stale container removed, the image checked and
// pulled, the rank's container as its owner's ids, stopped on a kill and
// removed when it ends.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "agent/allocation_supervisor.h"
#include "agent/container_runtime.h"
#include "agent/fake_message_sink.h"
#include "agent/fake_process_launcher.h"
#include "tests/support/wait_until.h"

namespace ring {
namespace agent_container_test {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using ring::testing::WaitUntil;

bool Has(const std::vector<std::string>& argv, const std::string& item) {
  return std::find(argv.begin(), argv.end(), item) != argv.end();
}

// The value after `flag` (the first time it appears), or "".
std::string After(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

std::vector<std::string> AllAfter(const std::vector<std::string>& argv, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) out.push_back(argv[i + 1]);
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

DetectedRuntime Podman() {
  DetectedRuntime r;
  r.kind = RuntimeKind::kPodman;
  r.binary = "/usr/bin/podman";
  r.version = "4.3.1";
  r.oci_runtime = "runc";
  return r;
}

proto::Start ContainerStart() {
  proto::Start s;
  s.allocation_id = "12.3";
  s.allocation_token = "secret-token";
  s.trial_id = 12;
  s.experiment_id = 4;
  s.rank = 1;
  s.world_size = 2;
  s.slot_ids = {1};
  s.slot_type = "cpu";
  s.entrypoint = "./run.sh";
  s.model_definition_path = "/m";
  proto::Container c;
  c.image = "localhost/quadratic:abc";
  c.checkpoint_path = "/srv/checkpoints";
  c.mounts = {{"/srv/data", "/data", true, "rprivate"}, {"/srv/scratch", "/scratch", false, "rshared"}};
  s.container = c;
  return s;
}

TEST(AgentContainerTest, PodmanInfoIsReadFromItsJson) {
  const std::string info =
      R"({"host":{"ociRuntime":{"name":"runc","version":"1.1.5"},"security":{"rootless":false}},)"
      R"("version":{"Version":"4.3.1"}})";
  auto r = ParseRuntimeInfo(RuntimeKind::kPodman, "/usr/bin/podman", info);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->version, "4.3.1");
  EXPECT_EQ(r->oci_runtime, "runc");
  EXPECT_FALSE(r->rootless);
  EXPECT_EQ(r->Info().name, "podman");
  auto rootless = ParseRuntimeInfo(RuntimeKind::kPodman, "/usr/bin/podman",
                                   R"({"host":{"security":{"rootless":true}},"version":{"Version":"5.0"}})");
  ASSERT_TRUE(rootless);
  EXPECT_TRUE(rootless->rootless);
  EXPECT_FALSE(ParseRuntimeInfo(RuntimeKind::kPodman, "/usr/bin/podman", "Error: cannot connect"));
}

TEST(AgentContainerTest, ADockerClientWithoutADaemonIsNoRuntime) {
  // What `docker info --format json` prints when no daemon answers.
  EXPECT_FALSE(
      ParseRuntimeInfo(RuntimeKind::kDocker, "/usr/local/bin/docker",
                       R"({"ID":"","Containers":0,"ServerVersion":"","ServerErrors":["Cannot connect"]})"));
  auto docker =
      ParseRuntimeInfo(RuntimeKind::kDocker, "/usr/bin/docker",
                       R"({"ServerVersion":"28.2.2","SecurityOptions":["name=seccomp","name=rootless"]})");
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->version, "28.2.2");
  EXPECT_TRUE(docker->rootless);
  auto apptainer = ParseRuntimeInfo(RuntimeKind::kApptainer, "/usr/bin/apptainer", "1.3.4\n");
  ASSERT_TRUE(apptainer);
  EXPECT_EQ(apptainer->version, "1.3.4");
}

TEST(AgentContainerTest, ChooseRuntimeTakesTheRequiredOneOrTheFirst) {
  DetectedRuntime docker = Podman();
  docker.kind = RuntimeKind::kDocker;
  const std::vector<DetectedRuntime> both{Podman(), docker};
  EXPECT_EQ(ChooseRuntime(both, "")->kind, RuntimeKind::kPodman);
  EXPECT_EQ(ChooseRuntime(both, "docker")->kind, RuntimeKind::kDocker);
  EXPECT_EQ(ChooseRuntime(both, "apptainer"), nullptr);
  EXPECT_EQ(ChooseRuntime({}, ""), nullptr);
}

TEST(AgentContainerTest, NamesAreUniqueOnTheHostAcrossAgentsAndClusters) {
  // Two clusters on one host both have an allocation 2.0 on an agent-1: a
  // container name or label shared between them would let one agent stop
  // or remove the other's rank.
  const std::string here = ContainerScope("agent-1", "/tmp/cluster-a/agent-1");
  const std::string there = ContainerScope("agent-1", "/tmp/cluster-b/agent-1");
  EXPECT_EQ(here, "agent-1@/tmp/cluster-a/agent-1");
  EXPECT_EQ(ContainerScope("agent-1", "/tmp/cluster-a/./agent-1/"), "agent-1@/tmp/cluster-a/agent-1/");
  EXPECT_NE(ContainerName(here, "2.0", 0), ContainerName(there, "2.0", 0));
  EXPECT_EQ(ContainerName(here, "2.0", 0), ContainerName(here, "2.0", 0)) << "stable across runs";
  EXPECT_NE(ContainerName(here, "2.0", 0), ContainerName(here, "2.0", 1));
  EXPECT_EQ(ContainerName(here, "2.0", 1).rfind("ring-", 0), 0u);
  EXPECT_EQ(ContainerName(here, "2.0", 1).substr(ContainerName(here, "2.0", 1).size() - 7), "-2.0.r1");
}

TEST(AgentContainerTest, PodmanRunsTheRankAsItsOwnerWithItsFoldersAndVariables) {
  const proto::Start start = ContainerStart();
  ContainerRun run;
  run.name = "ring-12.3.r1";
  run.work_dir = "/var/lib/ringagent/work/12.3.r1";
  run.user = SwitchIds{1001, 1001, {1001, 27}};
  run.env = {{"PATH", "/usr/bin:/bin"},
             {"HOME", "/home/alice"},
             {"RING_ALLOCATION_TOKEN", "secret-token"},
             {"RANK", "1"},
             {"CUDA_VISIBLE_DEVICES", ""}};
  run.command = {"/bin/sh", "-c", "./run.sh"};
  run.ulimits = {{"nofile", 1024, 4096}, {"nproc", 1000, 1000}};
  run.scope = "agent-7@/var/lib/ringagent/work";
  run.env_file = "/var/lib/ringagent/work/12.3.r1.env";
  run.runtime_env = {{"PATH", "/usr/sbin:/usr/bin"}, {"LANG", "C.UTF-8"}};
  run.env["LD_PRELOAD"] = "/home/alice/evil.so";
  run.env["CONTAINERS_CONF"] = "/home/alice/containers.conf";
  run.env["RING_DATA"] = "{\"a\":\n1}";
  const ContainerProcess p = ContainerRunCommand(Podman(), start, run);
  const auto& a = p.argv;
  ASSERT_GE(a.size(), 8u);
  EXPECT_EQ(a[0], "/usr/bin/podman");
  EXPECT_EQ(After(a, "--runtime"), "runc");
  EXPECT_TRUE(Has(a, "run"));
  EXPECT_TRUE(Has(a, "--rm"));
  EXPECT_EQ(After(a, "--name"), "ring-12.3.r1");
  // Labelled so that a new run of the agent finds what an earlier one left.
  EXPECT_EQ(AllAfter(a, "--label"),
            (std::vector<std::string>{"ring.allocation=12.3", "ring.agent=agent-7@/var/lib/ringagent/work"}));
  EXPECT_EQ(ListAgentContainersCommand(Podman(), "agent-7@/var/lib/ringagent/work"),
            (std::vector<std::string>{"/usr/bin/podman", "ps", "--all", "--quiet", "--filter",
                                      "label=ring.agent=agent-7@/var/lib/ringagent/work"}));
  EXPECT_EQ(After(a, "--network"), "host");
  EXPECT_EQ(After(a, "--cap-drop"), "all");
  EXPECT_EQ(After(a, "--security-opt"), "no-new-privileges");
  EXPECT_EQ(After(a, "--pull"), "never");
  EXPECT_EQ(AllAfter(a, "--ulimit"), (std::vector<std::string>{"nofile=1024:4096", "nproc=1000:1000"}));
  EXPECT_EQ(After(a, "--user"), "1001:1001");
  EXPECT_EQ(AllAfter(a, "--group-add"), std::vector<std::string>{"27"});
  EXPECT_EQ(AllAfter(a, "-v"), (std::vector<std::string>{
                                   "/var/lib/ringagent/work/12.3.r1:/var/lib/ringagent/work/12.3.r1",
                                   "/srv/checkpoints:/srv/checkpoints",
                                   "/srv/data:/data:ro,rprivate",
                                   "/srv/scratch:/scratch:rw,rshared",
                               }));
  EXPECT_EQ(After(a, "-w"), "/var/lib/ringagent/work/12.3.r1");
  // The rank's variables in the agent's file: not in argv, not in the
  // environment of the runtime, which is the agent's own.
  EXPECT_EQ(After(a, "--env-file"), "/var/lib/ringagent/work/12.3.r1.env");
  for (const auto& arg : a) EXPECT_EQ(arg.find("secret-token"), std::string::npos) << arg;
  EXPECT_NE(p.env_file_text.find("RING_ALLOCATION_TOKEN=secret-token\n"), std::string::npos)
      << p.env_file_text;
  EXPECT_NE(p.env_file_text.find("RANK=1\n"), std::string::npos);
  EXPECT_NE(p.env_file_text.find("LD_PRELOAD=/home/alice/evil.so\n"), std::string::npos)
      << "the container's own";
  EXPECT_EQ(p.env_file_text.find("PATH=/usr/bin"), std::string::npos) << "the image's PATH";
  EXPECT_EQ(p.env_file_text.find("HOME="), std::string::npos) << "the image's HOME";
  EXPECT_EQ(p.env, (Environment{{"PATH", "/usr/sbin:/usr/bin"}, {"LANG", "C.UTF-8"}}));
  // A value on two lines, which an env file cannot hold, goes in argv.
  EXPECT_EQ(AllAfter(a, "-e"), std::vector<std::string>{"RING_DATA={\"a\":\n1}"});
  // No GPU on a CPU slot.
  EXPECT_EQ(After(a, "--device"), "");
  // The image, then the command.
  const std::vector<std::string> tail(a.end() - 4, a.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"localhost/quadratic:abc", "/bin/sh", "-c", "./run.sh"}));
}

// A shell's rank: the runtime keeps stdin open and gives the container a
// terminal of its own, which it relays to the agent's; the runtime's Python
// folder (ring_notebook for a notebook) is there read-only.
TEST(AgentContainerTest, AShellGetsATerminalAndTheRuntimesPythonFolderIsMounted) {
  ContainerRun run;
  run.name = "n";
  run.work_dir = "/w";
  run.command = {"/bin/sh", "-l"};
  run.python_dir = "/usr/lib/ringmaster/python";
  ContainerProcess p = ContainerRunCommand(Podman(), ContainerStart(), run);
  EXPECT_FALSE(Has(p.argv, "--tty")) << "a rank that is no shell has no terminal";
  EXPECT_TRUE(Has(AllAfter(p.argv, "-v"), "/usr/lib/ringmaster/python:/usr/lib/ringmaster/python:ro"));
  run.terminal = true;
  p = ContainerRunCommand(Podman(), ContainerStart(), run);
  EXPECT_TRUE(Has(p.argv, "--interactive"));
  EXPECT_TRUE(Has(p.argv, "--tty"));
  DetectedRuntime apptainer;
  apptainer.kind = RuntimeKind::kApptainer;
  apptainer.binary = "/usr/bin/apptainer";
  p = ContainerRunCommand(apptainer, ContainerStart(), run);
  EXPECT_FALSE(Has(p.argv, "--tty")) << "apptainer runs in the agent's terminal";
  EXPECT_TRUE(Has(AllAfter(p.argv, "--bind"), "/usr/lib/ringmaster/python:/usr/lib/ringmaster/python:ro"));
}

TEST(AgentContainerTest, OnlyTheSlotsGpusReachTheContainer) {
  proto::Start start = ContainerStart();
  start.slot_type = "cuda";
  start.slot_ids = {1, 3};
  ContainerRun run;
  run.name = "n";
  run.work_dir = "/w";
  run.command = {"/bin/true"};
  run.slots = {{0, "cuda", "GPU-a"}, {1, "cuda", "GPU-b"}, {2, "cuda", "GPU-c"}, {3, "cuda", "GPU-d"}};
  const ContainerProcess podman = ContainerRunCommand(Podman(), start, run);
  EXPECT_EQ(AllAfter(podman.argv, "--device"),
            (std::vector<std::string>{"nvidia.com/gpu=GPU-b", "nvidia.com/gpu=GPU-d"}));
  EXPECT_TRUE(Has(AllAfter(podman.argv, "-e"), "NVIDIA_VISIBLE_DEVICES=GPU-b,GPU-d"));  // no env file here
  DetectedRuntime docker = Podman();
  docker.kind = RuntimeKind::kDocker;
  docker.binary = "/usr/bin/docker";
  const ContainerProcess d = ContainerRunCommand(docker, start, run);
  EXPECT_EQ(After(d.argv, "--gpus"), "\"device=GPU-b,GPU-d\"");
  EXPECT_EQ(After(d.argv, "--runtime"), "") << "podman's OCI runtime flag is not docker's";
}

TEST(AgentContainerTest, ApptainerPassesVariablesWithItsPrefixAndNoUserFlag) {
  DetectedRuntime apptainer;
  apptainer.kind = RuntimeKind::kApptainer;
  apptainer.binary = "/usr/bin/apptainer";
  ContainerRun run;
  run.name = "n";
  run.work_dir = "/w/12.3.r1";
  run.user = SwitchIds{1001, 1001, {}};
  run.env = {{"RANK", "1"}, {"PATH", "/usr/bin"}};
  run.command = {"/bin/sh", "-c", "./run.sh"};
  const ContainerProcess p = ContainerRunCommand(apptainer, ContainerStart(), run);
  EXPECT_EQ(p.argv[1], "exec");
  EXPECT_FALSE(Has(p.argv, "--user"));
  EXPECT_EQ(After(p.argv, "--pwd"), "/w/12.3.r1");
  EXPECT_TRUE(Has(p.argv, "/srv/data:/data:ro"));
  EXPECT_TRUE(Has(p.argv, "docker://localhost/quadratic:abc"));
  EXPECT_EQ(p.env.at("APPTAINERENV_RANK"), "1");
  EXPECT_EQ(p.env.count("APPTAINERENV_PATH"), 0u);
}

TEST(AgentContainerTest, PullsUseAnAuthFileAndStopsUseTheGrace) {
  const DetectedRuntime podman = Podman();
  EXPECT_EQ(PullCommand(podman, "r.example.com/a:1", "/w/x.auth"),
            (std::vector<std::string>{"/usr/bin/podman", "pull", "--quiet", "--authfile",
                                      "/w/x.auth/config.json", "r.example.com/a:1"}));
  EXPECT_EQ(PullCommand(podman, "a:1", ""),
            (std::vector<std::string>{"/usr/bin/podman", "pull", "--quiet", "a:1"}));
  const auto auth = nlohmann::json::parse(
      RegistryAuthJson({{"username", "alice"}, {"password", "pw"}}, "r.example.com:5000/team/a:1"));
  EXPECT_EQ(auth["auths"]["r.example.com:5000"]["auth"], "YWxpY2U6cHc=");  // base64("alice:pw")
  const auto hub = nlohmann::json::parse(RegistryAuthJson({{"auth", "eA=="}}, "team/a:1"));
  EXPECT_EQ(hub["auths"]["docker.io"]["auth"], "eA==");
  EXPECT_EQ(StopCommand(podman, "ring-1.0.r0", 2500ms),
            (std::vector<std::string>{"/usr/bin/podman", "stop", "--time", "3", "ring-1.0.r0"}));
  EXPECT_EQ(RemoveCommand(podman, "ring-1.0.r0")[1], "rm");
  EXPECT_TRUE(Has(RemoveCommand(podman, "ring-1.0.r0"), "--force"));
}

TEST(AgentContainerTest, UlimitsStayWithinTheAgentsHardLimits) {
  const auto limits = ContainerUlimits();
  ASSERT_EQ(limits.size(), 2u);
  for (const auto& u : limits) {
    EXPECT_LE(u.soft, u.hard) << u.name;
    EXPECT_GT(u.soft, 0u) << u.name;
  }
  EXPECT_LE(limits[1].hard, kMaxContainerProcs);
}

// A runner with an image, through the fake launcher.
class AgentContainerRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ring-agent-container-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_);
    io_thread_ = std::thread([this] { io_.run(); });
    // Short runtime commands end at once: the image is not there, the pull works.
    launcher_.set_auto_exit([](const ProcessSpec& spec) -> std::optional<FakeProcessLauncher::AutoExit> {
      if (Has(spec.argv, "exists")) return FakeProcessLauncher::AutoExit{{}, ExitStatus{1, std::nullopt}};
      if (Has(spec.argv, "pull") || Has(spec.argv, "rm") || Has(spec.argv, "stop"))
        return FakeProcessLauncher::AutoExit{{}, ExitStatus{0, std::nullopt}};
      return std::nullopt;
    });
  }
  void TearDown() override {
    work_.reset();
    io_.stop();
    io_thread_.join();
    workers_.join();
    supervisor_.reset();
    fs::remove_all(root_);
  }

  class Fetcher : public ModelFetcher {
   public:
    Status Fetch(const proto::Start&, const std::string& dest) override {
      std::ofstream(dest + "/run.sh") << "#!/bin/sh\n";
      return Status::Ok();
    }
  };

  AllocationSupervisor& Supervisor(std::vector<DetectedRuntime> runtimes) {
    RunnerContext context{boost::asio::make_strand(io_), workers_.get_executor()};
    context.launcher = &launcher_;
    context.fetcher = &fetcher_;
    context.sink = &sink_;
    context.master_url = "http://master:8080";
    context.agent_id = "agent-7";
    context.container_scope = ContainerScope("agent-7", root_.string());
    context.work_root = root_.string();
    context.slots = {{0, "cpu", ""}, {1, "cpu", ""}};
    context.inherited_env = {{"PATH", "/usr/bin:/bin"}};
    context.runtimes = std::move(runtimes);
    context.private_dirs = {root_.string(), "/var/lib/ringagent/agent-7"};
    supervisor_ = std::make_unique<AllocationSupervisor>(std::move(context));
    return *supervisor_;
  }

  // The launched processes whose argv has `word`.
  std::vector<FakeProcessLauncher::Launched> Launched(const std::string& word) {
    std::vector<FakeProcessLauncher::Launched> out;
    for (const auto& l : launcher_.launched())
      if (Has(l.spec.argv, word)) out.push_back(l);
    return out;
  }

  std::string ExitMessage(const std::string& id) {
    for (const auto& m : sink_.messages())
      if (auto* s = std::get_if<proto::StateChange>(&m);
          s && s->allocation_id == id && s->state == proto::ProcessState::kExited)
        return s->message.empty() ? "(exited)" : s->message;
    return "";
  }

  fs::path root_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  std::thread io_thread_;
  boost::asio::thread_pool workers_{2};
  FakeProcessLauncher launcher_;
  Fetcher fetcher_;
  FakeMessageSink sink_;
  std::unique_ptr<AllocationSupervisor> supervisor_;
};

TEST_F(AgentContainerRunnerTest, ARankWithAnImageRunsInItsContainerAndIsStoppedAndRemoved) {
  auto& supervisor = Supervisor({Podman()});
  boost::asio::post(io_, [&] { supervisor.HandleStart(ContainerStart()); });
  ASSERT_TRUE(WaitUntil([&] { return !Launched("run").empty(); }));
  // Before the run: the stale container removed, the image looked up, then pulled.
  const auto all = launcher_.launched();
  ASSERT_GE(all.size(), 4u);
  EXPECT_EQ(all[0].spec.argv[1], "rm");
  EXPECT_EQ(all[1].spec.argv[2], "exists");
  EXPECT_EQ(all[2].spec.argv[1], "pull");
  const auto run = Launched("run").front();
  EXPECT_EQ(After(run.spec.argv, "--name"),
            ContainerName(ContainerScope("agent-7", root_.string()), "12.3", 1));
  // Podman switches to the owner inside the container; the process that
  // starts it stays the agent's (single-user here: no --user).
  EXPECT_FALSE(run.spec.run_as);
  EXPECT_EQ(After(run.spec.argv, "--user"), "");
  EXPECT_EQ(run.spec.group, "12.3.r1");
  EXPECT_EQ(run.spec.cwd, "") << "the agent's: it may not enter the owner's folder; -w sets the container's";
  const std::string work = (root_ / "12.3.r1").string();
  EXPECT_TRUE(Has(AllAfter(run.spec.argv, "-v"), work + ":" + work));
  // The variables are in a file only the agent reads, removed with the folder.
  const std::string env_file = After(run.spec.argv, "--env-file");
  EXPECT_EQ(env_file, work + ".env");
  struct stat st {};
  ASSERT_EQ(::stat(env_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(ReadAll(env_file).find("RING_ALLOCATION_TOKEN=secret-token\n"), std::string::npos);
  EXPECT_FALSE(Has(run.spec.env, "RING_ALLOCATION_TOKEN=secret-token"));
  // A kill stops the container the same way as the bare process group.
  boost::asio::post(io_, [&] { supervisor.HandleKill(proto::Kill{"12.3", 2000, "paused"}); });
  ASSERT_TRUE(WaitUntil([&] { return !Launched("stop").empty(); }));
  EXPECT_EQ(After(Launched("stop").front().spec.argv, "--time"), "2");
  ASSERT_EQ(launcher_.terminations().size(), 1u);
  EXPECT_EQ(launcher_.terminations()[0].first, run.pid);
  // When it ends, the container is removed before the folder.
  launcher_.Exit(run.pid, ExitStatus{std::nullopt, 15});
  ASSERT_TRUE(WaitUntil([&] { return Launched("rm").size() == 2; }));
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(work); }));
  EXPECT_FALSE(fs::exists(env_file));
  EXPECT_NE(ExitMessage("12.3"), "");
}

// A pull that takes long (a registry far away) holds no worker thread: the
// workers go on preparing other ranks while two pulls run, the ranks being
// pulled for stay starting with a log line saying so, a kill stops its
// rank's pull and reports the rank's end, and a pull that ends lets its
// rank run.
TEST_F(AgentContainerRunnerTest, APullHoldsNoWorkerAndAKillStopsIt) {
  launcher_.set_auto_exit([](const ProcessSpec& spec) -> std::optional<FakeProcessLauncher::AutoExit> {
    if (Has(spec.argv, "exists")) return FakeProcessLauncher::AutoExit{{}, ExitStatus{1, std::nullopt}};
    if (Has(spec.argv, "rm") || Has(spec.argv, "stop"))
      return FakeProcessLauncher::AutoExit{{}, ExitStatus{0, std::nullopt}};
    return std::nullopt;  // the pulls block until the test ends them
  });
  launcher_.set_exit_on_terminate(true);
  auto& supervisor = Supervisor({Podman()});
  proto::Start a = ContainerStart();
  a.allocation_id = "12.1";
  a.container->image = "localhost/a:1";
  proto::Start b = ContainerStart();
  b.allocation_id = "12.2";
  b.container->image = "localhost/b:1";
  proto::Start bare = ContainerStart();
  bare.allocation_id = "12.4";
  bare.container.reset();
  boost::asio::post(io_, [&] {
    supervisor.HandleStart(a);
    supervisor.HandleStart(b);
  });
  ASSERT_TRUE(WaitUntil([&] { return Launched("pull").size() == 2; }));
  // Both workers are free: the bare rank is prepared and runs.
  boost::asio::post(io_, [&] { supervisor.HandleStart(bare); });
  ASSERT_TRUE(WaitUntil([&] {
    for (const auto& l : launcher_.launched())
      if (l.spec.group == "12.4.r1") return true;
    return false;
  })) << "a pull holds a worker thread";
  // The ranks being pulled for are starting, not running, and say why in their logs.
  auto states_of = [&](const std::string& id) {
    std::vector<proto::ProcessState> out;
    for (const auto& m : sink_.messages())
      if (auto* s = std::get_if<proto::StateChange>(&m); s && s->allocation_id == id) out.push_back(s->state);
    return out;
  };
  auto log_of = [&](const std::string& id) {
    std::string out;
    for (const auto& m : sink_.messages())
      if (auto* l = std::get_if<proto::LogBatch>(&m); l && l->allocation_id == id)
        for (const auto& line : l->lines) out += line.line + "\n";
    return out;
  };
  EXPECT_EQ(states_of("12.1"), (std::vector<proto::ProcessState>{proto::ProcessState::kStarting}));
  EXPECT_NE(log_of("12.1").find("pulling image localhost/a:1 with podman"), std::string::npos)
      << log_of("12.1");
  EXPECT_TRUE(Launched("run").empty());
  // A kill during the pull stops the pull and reports the rank's end; its
  // container never starts and its folder goes.
  auto pull_of = [&](const std::string& image) {
    for (const auto& l : Launched("pull"))
      if (Has(l.spec.argv, image)) return l.pid;
    return int64_t{0};
  };
  const int64_t pull_a = pull_of("localhost/a:1");
  const int64_t pull_b = pull_of("localhost/b:1");
  ASSERT_NE(pull_a, 0);
  ASSERT_NE(pull_b, 0);
  boost::asio::post(io_, [&] { supervisor.HandleKill(proto::Kill{"12.1", 2000, "paused"}); });
  ASSERT_TRUE(WaitUntil([&] { return !ExitMessage("12.1").empty(); }));
  EXPECT_NE(ExitMessage("12.1").find("killed before the process started"), std::string::npos)
      << ExitMessage("12.1");
  ASSERT_FALSE(launcher_.terminations().empty());
  EXPECT_EQ(launcher_.terminations()[0].first, pull_a);
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(root_ / "12.1.r1"); }));
  EXPECT_TRUE(Launched("run").empty());
  // The other pull ends well: its rank runs in its container.
  launcher_.Exit(pull_b, ExitStatus{0, std::nullopt});
  ASSERT_TRUE(WaitUntil([&] { return !Launched("run").empty(); }));
  EXPECT_EQ(Launched("run").size(), 1u);
  EXPECT_EQ(Launched("run")[0].spec.group, "12.2.r1");
  EXPECT_TRUE(WaitUntil([&] { return states_of("12.2").back() == proto::ProcessState::kRunning; }));
  EXPECT_NE(log_of("12.2").find("pulled image localhost/b:1 in"), std::string::npos) << log_of("12.2");
}

// A pull that fails ends its rank with the runtime's own error.
TEST_F(AgentContainerRunnerTest, AFailedPullEndsTheRankWithTheRuntimesError) {
  launcher_.set_auto_exit([](const ProcessSpec& spec) -> std::optional<FakeProcessLauncher::AutoExit> {
    if (Has(spec.argv, "exists")) return FakeProcessLauncher::AutoExit{{}, ExitStatus{1, std::nullopt}};
    if (Has(spec.argv, "rm")) return FakeProcessLauncher::AutoExit{{}, ExitStatus{0, std::nullopt}};
    return std::nullopt;
  });
  auto& supervisor = Supervisor({Podman()});
  boost::asio::post(io_, [&] { supervisor.HandleStart(ContainerStart()); });
  ASSERT_TRUE(WaitUntil([&] { return !Launched("pull").empty(); }));
  const int64_t pull = Launched("pull")[0].pid;
  launcher_.EmitLine(pull, OutputStream::kStderr, "Error: initializing source: connection refused");
  launcher_.Exit(pull, ExitStatus{125, std::nullopt});
  ASSERT_TRUE(WaitUntil([&] { return !ExitMessage("12.3").empty(); }));
  EXPECT_EQ(ExitMessage("12.3"),
            "cannot pull image localhost/quadratic:abc: Error: initializing source: connection refused");
  EXPECT_TRUE(Launched("run").empty());
}

TEST_F(AgentContainerRunnerTest, ARankOfALinkedOwnerRunsAsItsIdsInsideTheContainer) {
  if (::geteuid() != 0) GTEST_SKIP() << "handing the rank's folder to another uid needs root";
  // The run-as policy of an agent that can switch users.
  RunnerContext context{boost::asio::make_strand(io_), workers_.get_executor()};
  context.launcher = &launcher_;
  context.fetcher = &fetcher_;
  context.sink = &sink_;
  context.work_root = root_.string();
  context.inherited_env = {{"PATH", "/usr/bin:/bin"}};
  context.runtimes = {Podman()};
  context.run_as.switch_users = true;
  context.run_as.unlinked = UnixAccount{65534, 65534, {65534}, "nobody", "/"};
  supervisor_ = std::make_unique<AllocationSupervisor>(std::move(context));
  proto::Start start = ContainerStart();
  start.container->checkpoint_path.clear();
  start.run_as = proto::RunAs{4242, 4343, "", ""};
  boost::asio::post(io_, [&] { supervisor_->HandleStart(start); });
  ASSERT_TRUE(WaitUntil([&] { return !Launched("run").empty(); }));
  const auto run = Launched("run").front();
  // The runtime switches inside the container; the process that starts it
  // is not switched (podman must stay root to start a container).
  EXPECT_EQ(After(run.spec.argv, "--user"), "4242:4343");
  EXPECT_FALSE(run.spec.run_as);
  // The rank's folder is the owner's, as for a bare rank.
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "12.3.r1").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  launcher_.Exit(run.pid, ExitStatus{0, std::nullopt});
  EXPECT_TRUE(WaitUntil([&] { return !ExitMessage("12.3").empty(); }));
}

TEST_F(AgentContainerRunnerTest, AnImageOnAnAgentWithoutARuntimeExitsSayingSo) {
  auto& supervisor = Supervisor({});
  boost::asio::post(io_, [&] { supervisor.HandleStart(ContainerStart()); });
  ASSERT_TRUE(WaitUntil([&] { return !ExitMessage("12.3").empty(); }));
  EXPECT_NE(ExitMessage("12.3").find("no container runtime"), std::string::npos) << ExitMessage("12.3");
  EXPECT_TRUE(launcher_.launched().empty());
}

TEST_F(AgentContainerRunnerTest, AMountOfTheAgentsOwnFoldersIsRefused) {
  auto& supervisor = Supervisor({Podman()});
  for (const std::string& host :
       {root_.string() + "/12.9.r0", std::string("/var/lib/ringagent"), std::string("/")}) {
    proto::Start start = ContainerStart();
    start.allocation_id = "12." + std::to_string(host.size());
    start.container->mounts = {{host, "/x", false, "rprivate"}};
    boost::asio::post(io_, [&supervisor, start] { supervisor.HandleStart(start); });
    ASSERT_TRUE(WaitUntil([&] { return !ExitMessage(start.allocation_id).empty(); })) << host;
    EXPECT_NE(ExitMessage(start.allocation_id).find("agent's own folder"), std::string::npos)
        << host << ": " << ExitMessage(start.allocation_id);
  }
  EXPECT_TRUE(Launched("run").empty());
}

}  // namespace agent_container_test
}  // namespace ring
