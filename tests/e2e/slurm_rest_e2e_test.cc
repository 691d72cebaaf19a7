// A Slurm pool that talks to Slurm through slurmrestd (docs/slurm.md
// "Through slurmrestd"), on the real Slurm of slurm_environment.h with its
// slurmrestd: the master reads nodes and jobs as a service account, submits
// each job with a token for its owner's linked account, and Slurm runs it
// as that account. The job's credential travels in its environment and
// never reaches the trial. An unlinked owner is refused, and a killed
// experiment's job is cancelled as its owner.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/e2e/slurm_environment.h"
#include "tests/support/test_account.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::slurm_rest_e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Prints the account and whether the allocation's credential is in the
// trial's environment, then trains.
constexpr const char* kProbe =
    R"sh(echo "probe uid=$(id -u) credential_vars=$(env | grep -c RING_ALLOCATION_CREDENTIAL)"
exec sh run.sh
)sh";

std::string Config(const std::string& name, int batches) {
  return "name: " + name +
         "\nentrypoint: sh probe.sh\nhyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n"
         "  report_every: 50\n  momentum: 0.0\n  checkpoint_every: 100\n  batch_sleep_ms: 20\n"
         "searcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: " +
         std::to_string(batches) + "\nmax_restarts: 0\nmin_checkpoint_period:\n  batches: 100\n";
}

TEST(SlurmRestE2E, JobsRunAsTheirOwnersThroughSlurmrestd) {
  RING_NEED_SLURM(slurm);
  std::string why;
  const std::string restd = slurm->StartRestd(&why);
  if (restd.empty()) GTEST_SKIP() << why;
  TestAccount owner("srr");
  TestCluster cluster;
  ASSERT_EQ(::chmod(cluster.dir().c_str(), 0711), 0);
  const std::string checkpoints = cluster.dir() + "/checkpoints";
  const std::string output = cluster.dir() + "/slurm-output";
  for (const auto& dir : {checkpoints, output}) {
    fs::create_directories(dir);
    ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
  }
  const std::string master_yaml = cluster.WriteFile(
      "master.yaml", "checkpoint_root: " + checkpoints +
                         "\nresource_pools:\n  - name: default\n    resource_manager:\n      type: slurm\n"
                         "      partition: " +
                         slurm->partition() +
                         "\n      slot_type: cpu\n      slots_per_node: 2\n      agent_binary: " + BinDir() +
                         "/ringagent\n      poll_interval_ms: 200\n      agent_connect_timeout_ms: 60000\n"
                         "      sbatch_args: [--time=30]\n"
                         "      rest:\n        url: " +
                         restd + "\n        user: nobody\n        jwt_key_file: " + slurm->jwt_key() +
                         "\n        output_dir: " + output + "\n");
  TestCluster::MasterOptions master;
  master.host = slurm->bridge_address();
  master.extra_args = {"--config", master_yaml};
  cluster.StartMaster(master);

  auto pools = cluster.Ring({"pool", "list"});
  ASSERT_EQ(pools.exit_code, 0) << pools.err;
  EXPECT_NE(pools.out.find("each owner"), std::string::npos) << pools.out;

  const std::string model = cluster.dir() + "/model";
  fs::copy(BinDir() + "/../examples/quadratic/model", model, fs::copy_options::recursive);
  std::ofstream(model + "/probe.sh") << kProbe;
  const std::string config = cluster.WriteFile("rest.yaml", Config("rest", 500));

  // No linked account, no job: the pool runs every job as its owner.
  const std::string dave_token = cluster.CreateUser("dave", "dave-password");
  auto refused = cluster.RingAs("dave", dave_token, {"experiment", "create", config, model});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("dave has none linked"), std::string::npos) << refused.err;

  const std::string carol_token = cluster.CreateUser("carol", "carol-password");
  ASSERT_EQ(cluster.Ring({"user", "link-unix", "carol", "--unix-user", owner.name()}).exit_code, 0);
  auto as_carol = [&](std::vector<std::string> args) { return cluster.RingAs("carol", carol_token, args); };
  auto created = as_carol({"experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;

  // Slurm runs its job as carol's account, named for the allocation, with
  // the pool's sbatch_args as job fields (--time=30 is time_limit 30).
  int64_t job = 0;
  nlohmann::json seen;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto listed = cluster.GetJson("/api/v1/jobs");
        seen = listed;
        for (const auto& j : listed["jobs"])
          if (j.contains("slurm_job_id") && j.value("slurm_state", "") == "RUNNING")
            job = j["slurm_job_id"].get<int64_t>();
        return job > 0;
      },
      60s))
      << seen.dump();
  auto squeue = slurm->Run({"squeue", "-h", "-j", std::to_string(job), "-o", "%U %j %l"});
  EXPECT_EQ(squeue.out.substr(0, squeue.out.find(' ')), std::to_string(owner.uid())) << squeue.out;
  EXPECT_NE(squeue.out.find(" ring-"), std::string::npos) << squeue.out;
  EXPECT_NE(squeue.out.find("30:00"), std::string::npos) << squeue.out;

  const std::string state = WaitFinalState(cluster, 1, 120s);
  const auto logs = cluster.GetJson("/api/v1/trials/1/logs?limit=1000");
  EXPECT_EQ(state, "COMPLETED") << logs.dump(1);
  bool probed = false;
  for (const auto& line : logs["logs"])
    probed =
        probed || line.value("line", "") == "probe uid=" + std::to_string(owner.uid()) + " credential_vars=0";
  EXPECT_TRUE(probed) << "the trial did not run as carol's account, or saw the credential: " << logs.dump(1);
  // Slurm wrote the job's own output as carol, where the pool said.
  int outputs = 0;
  for (const auto& entry : fs::directory_iterator(output)) {
    struct stat st {};
    ASSERT_EQ(::stat(entry.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, owner.uid()) << entry.path();
    ++outputs;
  }
  EXPECT_EQ(outputs, 1);

  // A killed experiment's job leaves Slurm, cancelled as carol.
  const std::string long_config = cluster.WriteFile("rest-long.yaml", Config("rest-long", 100000));
  created = as_carol({"experiment", "create", long_config, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  int64_t second = 0;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const auto listed = cluster.GetJson("/api/v1/jobs");
        for (const auto& j : listed["jobs"])
          if (j.contains("slurm_job_id") && j.value("slurm_state", "") == "RUNNING" &&
              j["slurm_job_id"].get<int64_t>() != job)
            second = j["slurm_job_id"].get<int64_t>();
        return second > 0;
      },
      60s));
  ASSERT_EQ(as_carol({"experiment", "kill", "2"}).exit_code, 0);
  EXPECT_EQ(WaitFinalState(cluster, 2, 60s), "CANCELED");
  EXPECT_TRUE(slurm->WaitIdle(60s)) << slurm->Run({"squeue"}).out;
  if (HasFailure()) slurm->DumpLogs();
}

}  // namespace
}  // namespace ring::testing::slurm_rest_e2e
