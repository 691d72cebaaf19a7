// Ringmaster on a real Slurm: a slurmctld and two slurmd, each in a network
// namespace of its own (tests/support/slurm_cluster.h). One Slurm cluster
// serves every case of one run of this binary (SlurmEnvironment); each case
// skips, saying why, where the machine cannot run Slurm.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "tests/e2e/slurm_environment.h"
#include "tests/support/slurm_cluster.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::slurm_e2e {
namespace {

TEST(SlurmE2E, ClusterRunsOneTaskOnEachNode) {
  RING_NEED_SLURM(slurm);
  auto r = slurm->Run({"srun", "-N2", "-l", "hostname"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0: n1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1: n2"), std::string::npos) << r.out;
}

// ringagent's one-allocation mode outside of Slurm: it refuses to start
// without a job step's environment, and leaves when no start comes (an
// orphaned job must not hold its nodes until its time limit).
TEST(SlurmE2E, AJobAgentNeedsItsJobAndLeavesWithoutAStart) {
  char templ[] = "/tmp/ring-job-agent-XXXXXX";
  const std::string dir = mkdtemp(templ);
  const std::string credential = dir + "/credential";
  { std::ofstream(credential) << "0123456789abcdef\n"; }
  std::filesystem::permissions(credential,
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  const std::vector<std::string> argv = {BinDir() + "/ringagent",
                                         "--slurm-allocation",
                                         "1.0",
                                         "--master",
                                         "http://127.0.0.1:1",
                                         "--credential-file",
                                         credential,
                                         "--job-start-timeout-ms",
                                         "300",
                                         "--work-dir",
                                         dir + "/work"};
  auto outside = RunCommand(argv, {{"SLURM_JOB_ID", ""}, {"SLURMD_NODENAME", ""}}, std::chrono::seconds(10));
  EXPECT_EQ(outside.exit_code, 2) << outside.out << outside.err;
  EXPECT_NE((outside.out + outside.err).find("SLURM_JOB_ID"), std::string::npos)
      << outside.out << outside.err;

  const auto start = std::chrono::steady_clock::now();
  auto left = RunCommand(argv, {{"SLURM_JOB_ID", "7"}, {"SLURMD_NODENAME", "n9"}}, std::chrono::seconds(20));
  EXPECT_EQ(left.exit_code, 0) << left.out << left.err;
  EXPECT_NE((left.out + left.err).find("no start for allocation 1.0"), std::string::npos)
      << left.out << left.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  std::filesystem::remove_all(dir);
}

TEST(SlurmE2E, QuadraticCompletesAsOneSlurmJob) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartSlurmMaster(cluster, *slurm);
  const std::string model = BinDir() + "/../examples/quadratic/model";
  const std::string config = SourceDir() + "/configs/experiments/quadratic.yaml";
  // The partition's two nodes of 2 slots are the pool's.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto pools = cluster.GetJson("/api/v1/pools");
        for (const auto& p : pools["pools"])
          if (p["name"] == "default") return p["agents"] == 2 && p["slots"] == 4;
        return false;
      },
      std::chrono::seconds(10)))
      << cluster.GetJson("/api/v1/pools").dump();
  auto created = cluster.Ring({"experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;

  // While it runs, `ring agent list` shows the job's agent with its Slurm job id.
  bool saw_job_agent = false;
  const bool done = TestCluster::WaitFor(
      [&] {
        if (!saw_job_agent) {
          auto agents = cluster.GetJson("/api/v1/agents")["agents"];
          for (const auto& a : agents)
            if (a.contains("slurm_job_id")) saw_job_agent = true;
        }
        auto state = cluster.GetJson("/api/v1/experiments/1")["state"];
        return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
      },
      std::chrono::seconds(120));
  auto exp = cluster.GetJson("/api/v1/experiments/1");
  if (!done || exp["state"] != "COMPLETED") slurm->DumpLogs();
  ASSERT_TRUE(done) << exp.dump();
  EXPECT_EQ(exp["state"], "COMPLETED") << exp.dump();
  auto trial = cluster.GetJson("/api/v1/trials/1");
  EXPECT_EQ(trial["state"], "COMPLETED");
  EXPECT_EQ(trial["total_batches"], 500);
  EXPECT_EQ(trial["restarts"], 0) << trial.dump();
  EXPECT_TRUE(saw_job_agent);
  // The job ended with its agent; Slurm's queue empties.
  EXPECT_TRUE(slurm->WaitIdle(std::chrono::seconds(20))) << slurm->Run({"squeue"}).out;
}

// Slurm cancels the job under a running trial (an operator's scancel): that
// is the infrastructure's doing. Slurm's SIGTERM reaches the trial as a
// preemption request (and the master asks the same): it checkpoints where
// it is, acknowledges and exits 0 within Slurm's KillWait, and resumes from
// that checkpoint in a new job without using up a restart (max_restarts: 0
// would fail it). Periodic checkpoints are 200 batches apart, so resuming
// from one would report batches twice.
TEST(SlurmE2E, ScancelOfARunningJobResumesFromTheCheckpoint) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartSlurmMaster(cluster, *slurm);
  const std::string config = SlowQuadraticConfig(cluster, "scancel");
  auto created = cluster.Ring({"experiment", "create", config, BinDir() + "/../examples/quadratic/model"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;

  // A checkpoint exists and the trial still trains: cancel its job.
  int64_t first_job = 0;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        first_job = LiveSlurmJob(cluster);
        auto checkpoints = cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"];
        return first_job > 0 && !checkpoints.empty();
      },
      std::chrono::seconds(60)))
      << cluster.GetJson("/api/v1/agents").dump() << cluster.GetJson("/api/v1/trials/1/checkpoints").dump();
  auto cancelled = slurm->Run({"scancel", std::to_string(first_job)});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;

  int64_t second_job = 0;
  const bool done = TestCluster::WaitFor(
      [&] {
        if (const int64_t job = LiveSlurmJob(cluster); job > first_job) second_job = job;
        auto state = cluster.GetJson("/api/v1/experiments/1")["state"];
        return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
      },
      std::chrono::seconds(120));
  auto trial = cluster.GetJson("/api/v1/trials/1");
  ASSERT_TRUE(done) << trial.dump();
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["state"], "COMPLETED") << trial.dump();
  EXPECT_EQ(trial["restarts"], 0) << trial.dump();
  EXPECT_EQ(trial["total_batches"], 500);
  EXPECT_GT(second_job, first_job) << "the trial did not run in a second Slurm job";
  // The second job resumed from the checkpoint taken at the signal: no
  // training report twice, none missing.
  auto training = cluster.GetJson("/api/v1/trials/1/metrics?kind=training")["metrics"];
  std::map<int64_t, int> reports;
  for (const auto& m : training) ++reports[m["batches"].get<int64_t>()];
  EXPECT_EQ(reports.size(), 20u) << training.dump();
  for (const auto& [batches, count] : reports)
    EXPECT_EQ(count, 1) << "batch " << batches << " reported " << count
                        << " times: resumed from an older checkpoint";
  auto checkpoints = cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"];
  bool at_signal = false;
  for (const auto& c : checkpoints) at_signal = at_signal || c["batches"].get<int64_t>() % 200 != 0;
  EXPECT_TRUE(at_signal) << "no checkpoint taken at the signal: " << checkpoints.dump();
  // The first job's end is a preemption: the trial checkpointed, said so
  // and exited 0 on the request (rule F10 requeues it).
  auto allocations = cluster.GetJson("/api/v1/trials/1/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 2u) << allocations.dump();
  EXPECT_EQ(allocations[0]["end_cause"], "COMPLETED") << allocations[0].dump();
  EXPECT_EQ(allocations[0]["exit_code"], 0) << allocations[0].dump();
  EXPECT_EQ(allocations[1]["end_cause"], "COMPLETED") << allocations[1].dump();
}

// kill -9 of the master while a trial trains in its Slurm job: the job runs
// on, the restarted master finds it by the job id it stored, the job's agent
// reconnects with its allocation's credential, and the same allocation
// completes: no second job, no restart.
TEST(SlurmE2E, AMasterKilledAndRestartedReattachesToItsRunningJob) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  auto options = SlurmMasterOptions(cluster, *slurm);
  options.reconnect_window_ms = 20000;  // how long the job's agents have to come back
  cluster.StartMaster(options);
  const std::string config = cluster.WriteFile(
      "restart.yaml",
      "name: restart\nentrypoint: sh run.sh\nhyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n"
      "  report_every: 50\n  momentum: 0.0\n  checkpoint_every: 100\n  batch_sleep_ms: 15\n"
      "searcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: 500\n"
      "max_restarts: 0\nmin_checkpoint_period:\n  batches: 100\n");
  auto created = cluster.Ring({"experiment", "create", config, BinDir() + "/../examples/quadratic/model"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  int64_t job = 0;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        job = LiveSlurmJob(cluster);
        return job > 0 && !cluster.GetJson("/api/v1/trials/1/checkpoints")["checkpoints"].empty();
      },
      std::chrono::seconds(60)));
  cluster.KillMaster();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  cluster.StartMaster(options);

  int64_t other_job = 0;
  const bool done = TestCluster::WaitFor(
      [&] {
        if (const int64_t live = LiveSlurmJob(cluster); live != 0 && live != job) other_job = live;
        auto state = cluster.GetJson("/api/v1/experiments/1")["state"];
        return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
      },
      std::chrono::seconds(90));
  auto trial = cluster.GetJson("/api/v1/trials/1");
  ASSERT_TRUE(done) << trial.dump();
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["state"], "COMPLETED") << trial.dump();
  EXPECT_EQ(trial["restarts"], 0) << trial.dump();
  EXPECT_EQ(other_job, 0) << "a second Slurm job ran";
  auto allocations = cluster.GetJson("/api/v1/trials/1/allocations")["allocations"];
  ASSERT_EQ(allocations.size(), 1u) << allocations.dump();
  EXPECT_EQ(allocations[0]["end_cause"], "COMPLETED") << allocations[0].dump();
}

// A trial of 4 slots takes both nodes (2 slots each): one Slurm job whose
// srun puts an agent on each slurmd, each starting its node's two ranks in
// that node's network and UTS namespace, all pointed at rank 0's node.
TEST(SlurmE2E, ATwoNodeGangSpansBothSlurmNodes) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartSlurmMaster(cluster, *slurm);
  const std::string model = cluster.MakeModelDir(
      "gang", {{"run.sh", "echo \"rank=$RANK world=$WORLD_SIZE host=$(hostname) master=$MASTER_ADDR\"\n"}});
  const std::string config = cluster.WriteFile(
      "gang.yaml",
      "name: gang\nentrypoint: sh run.sh\nmax_restarts: 0\nresources:\n  slots_per_trial: 4\n"
      "searcher:\n  name: single\n  metric: loss\n");
  auto created = cluster.Ring({"experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto state = cluster.GetJson("/api/v1/experiments/1")["state"];
        return state == "COMPLETED" || state == "ERROR";
      },
      std::chrono::seconds(60)));
  EXPECT_EQ(cluster.GetJson("/api/v1/experiments/1")["state"], "COMPLETED")
      << cluster.GetJson("/api/v1/trials/1").dump();
  const auto logs = cluster.GetJson("/api/v1/trials/1/logs?limit=100");
  std::map<std::string, std::string> host_of_rank;
  std::set<std::string> masters;
  for (const auto& l : logs["logs"]) {
    const std::string line = l["line"];
    if (line.rfind("rank=", 0) != 0) continue;
    host_of_rank[line.substr(5, line.find(' ') - 5)] = line.substr(line.find("host=") + 5, 2);
    masters.insert(line.substr(line.find("master=") + 7));
    EXPECT_NE(line.find("world=4"), std::string::npos) << line;
  }
  // Ranks 0-1 on one node, 2-3 on the other (which is which is the scheduler's choice).
  ASSERT_EQ(host_of_rank.size(), 4u) << logs.dump();
  EXPECT_EQ(host_of_rank["0"], host_of_rank["1"]);
  EXPECT_EQ(host_of_rank["2"], host_of_rank["3"]);
  EXPECT_EQ((std::set<std::string>{host_of_rank["0"], host_of_rank["2"]}),
            (std::set<std::string>{"n1", "n2"}));
  ASSERT_EQ(masters.size(), 1u) << logs.dump();  // every rank rendezvous at rank 0's node
  EXPECT_NE(*masters.begin(), slurm->bridge_address());
}

// Another Slurm user's job holds both nodes: the trial's job waits in Slurm,
// and `ring job list` shows its Slurm job id and Slurm's reason in words;
// when the other job ends, the trial runs to completion.
TEST(SlurmE2E, AJobPendingInSlurmShowsSlurmsReason) {
  RING_NEED_SLURM(slurm);
  auto blocker =
      slurm->Run({"sbatch", "--parsable", "-N2", "--exclusive", "-o", "/dev/null", "--wrap", "sleep 120"});
  ASSERT_EQ(blocker.exit_code, 0) << blocker.err;
  const std::string blocker_id = blocker.out.substr(0, blocker.out.find_first_of(";\n"));
  TestCluster cluster;
  StartSlurmMaster(cluster, *slurm);
  auto created = cluster.Ring({"experiment", "create", SourceDir() + "/configs/experiments/quadratic.yaml",
                               BinDir() + "/../examples/quadratic/model"});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;

  CommandResult list;
  const bool pending = TestCluster::WaitFor(
      [&] {
        list = cluster.Ring({"job", "list"});
        return list.out.find("in Slurm: ") != std::string::npos;
      },
      std::chrono::seconds(30));
  slurm->Run({"scancel", blocker_id});
  ASSERT_TRUE(pending) << list.out << list.err;
  EXPECT_NE(list.out.find("(Slurm job "), std::string::npos) << list.out;
  // Without accounting, Slurm says Resources (or Priority behind another job).
  EXPECT_TRUE(list.out.find("(Slurm: Resources)") != std::string::npos ||
              list.out.find("(Slurm: Priority)") != std::string::npos)
      << list.out;
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return cluster.GetJson("/api/v1/experiments/1")["state"] == "COMPLETED"; },
                           std::chrono::seconds(60)))
      << cluster.GetJson("/api/v1/trials/1").dump();
}

// The quadratic example in a small podman image (tests/e2e/data/
// quadratic_image.sh, as container_e2e_test builds it) on a Slurm pool that
// declares podman: the job's agent runs its rank in the container on its
// node. Skips, saying why, where podman cannot run a container.
TEST(SlurmE2E, QuadraticRunsInAPodmanContainerOnASlurmPool) {
  RING_NEED_SLURM(slurm);
  const std::string podman = "/usr/bin/podman";
  if (::access(podman.c_str(), X_OK) != 0) GTEST_SKIP() << "podman is not installed";
  const std::string model_dir = BinDir() + "/../examples/quadratic/model";
  const auto built = RunCommand({"sh", SourceDir() + "/tests/e2e/data/quadratic_image.sh", podman,
                                 model_dir + "/quadratic_trial", model_dir + "/libringtrial.so.0"},
                                {}, std::chrono::seconds(120));
  if (built.exit_code != 0) GTEST_SKIP() << "podman cannot build the test image here: " << built.err;
  const std::string image = built.out.substr(0, built.out.find('\n'));
  TestCluster cluster;
  cluster.StartMaster(SlurmMasterOptions(cluster, *slurm, 2, "      container_runtime: podman\n"));
  const std::string model = cluster.MakeModelDir(
      "model", {{"run.sh", ReadFileText(SourceDir() + "/examples/quadratic/model/run.sh")}});
  const std::string config = cluster.WriteFile(
      "boxed.yaml",
      "name: boxed\nentrypoint: sh run.sh\nmax_restarts: 0\n"
      "hyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n  report_every: 50\n  momentum: 0.9\n"
      "  checkpoint_every: 100\n  batch_sleep_ms: 5\n"
      "searcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: 500\n"
      "environment:\n  image: " +
          image + "\n  variables:\n    RING_EXAMPLES_BIN: /opt/quadratic\n");
  auto created = cluster.Ring({"--json", "experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  const int64_t exp = nlohmann::json::parse(created.out)["id"];
  bool saw_runtime = false;  // the job's agent says it has podman
  const bool done = TestCluster::WaitFor(
      [&] {
        const auto agents = cluster.GetJson("/api/v1/agents")["agents"];
        for (const auto& a : agents)
          if (a.contains("slurm_job_id") && !a["container_runtimes"].empty() &&
              a["container_runtimes"][0]["name"] == "podman")
            saw_runtime = true;
        auto state = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp))["state"];
        return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
      },
      std::chrono::seconds(90));
  auto logs = cluster.Ring({"trial", "logs", "1"}).out;
  auto got = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp));
  if (!done || got["state"] != "COMPLETED") slurm->DumpLogs();
  ASSERT_TRUE(done) << got.dump();
  EXPECT_EQ(got["state"], "COMPLETED") << got.dump() << logs;
  EXPECT_TRUE(saw_runtime);
  EXPECT_EQ(cluster.GetJson("/api/v1/trials/1")["total_batches"], 500);
  // The rank ran in its container: podman's container of the allocation is gone with it.
  const auto left = RunCommand({podman, "ps", "--all", "--quiet", "--filter", "label=ring.allocation=1.0"});
  EXPECT_EQ(left.out, "") << "containers left behind";
  EXPECT_TRUE(slurm->WaitIdle(std::chrono::seconds(20))) << slurm->Run({"squeue"}).out;
}

// A Slurm pool that declares no runtime refuses an image at submit, naming
// the pool and the key to set.
TEST(SlurmE2E, APoolWithoutADeclaredRuntimeRefusesAnImage) {
  RING_NEED_SLURM(slurm);
  TestCluster cluster;
  StartSlurmMaster(cluster, *slurm);
  const std::string model = cluster.MakeModelDir("model", {{"run.sh", "#!/bin/sh\n"}});
  const std::string config = cluster.WriteFile(
      "boxed.yaml",
      "name: boxed\nentrypoint: sh run.sh\nsearcher:\n  name: single\n  metric: validation_loss\n"
      "  max_length:\n    batches: 5\nenvironment:\n  image: localhost/quadratic:1\n");
  auto refused = cluster.Ring({"experiment", "create", config, model});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(
      refused.err.find("experiment.yaml:9: environment.image: pool default runs its trials as Slurm jobs"),
      std::string::npos)
      << refused.out << refused.err;
  EXPECT_NE(refused.err.find("resource_manager.container_runtime"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace ring::testing::slurm_e2e
