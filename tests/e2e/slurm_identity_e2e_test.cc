// Slurm jobs run as their owners' accounts (docs/slurm.md "Whose account
// runs the jobs"), on the real Slurm of slurm_environment.h: the master
// submits through ring-slurm-submit, and a linked user's trial runs in its
// Slurm job as her Unix account. Then the attacks on the helper, each
// against the running master and Slurm: another account calling it, a
// settings file of the caller's own, a made-up credential, a real
// credential for another account, for root, with an option that runs
// something else, a second job for the same allocation, and cancelling a
// job that is not Ringmaster's; and a command of hers runs as her account
// too. Needs root (accounts, a setuid copy).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "common/http_client.h"
#include "tests/e2e/slurm_environment.h"
#include "tests/support/test_account.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::slurm_identity_e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kProbe = R"sh(echo "probe uid=$(id -u) gid=$(id -g)"
exec sh run.sh
)sh";

// Long enough to try the helper while the trial's job runs.
constexpr const char* kConfig = R"(name: as-owner
entrypoint: sh probe.sh
hyperparameters:
  learning_rate: 0.05
  batch_size: 32
  report_every: 50
  momentum: 0.0
  checkpoint_every: 100
  batch_sleep_ms: 25
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 600
max_restarts: 0
min_checkpoint_period:
  batches: 100
)";

uid_t OwnerOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_uid : ~uid_t{0};
}

int CountJobs(const SlurmCluster& slurm) {
  auto r = slurm.Run({"squeue", "-h", "-o", "%i"});
  int n = 0;
  for (char c : r.out) n += c == '\n';
  return n;
}

TEST(SlurmIdentityE2E, ATrialRunsAsItsOwnerAndTheSubmitHelperRefusesEveryOtherUse) {
  RING_NEED_SLURM(slurm);
  TestAccount owner("slo");
  TestAccount master_account("slm");  // master_user: the account a master would run as
  TestAccount eve("sle");
  ASSERT_NE(owner.uid(), 0u);
  TestCluster cluster;

  // As a site sets it up: folders above let accounts pass, the checkpoint
  // root is sticky, the job folder root is root's, the helper's settings
  // are root's and the helper is a setuid copy.
  ASSERT_EQ(::chmod(cluster.dir().c_str(), 0711), 0);
  const std::string checkpoints = cluster.dir() + "/checkpoints";
  const std::string job_dir = cluster.dir() + "/slurm-jobs";
  fs::create_directories(checkpoints);
  fs::create_directories(job_dir);
  ASSERT_EQ(::chmod(checkpoints.c_str(), 01777), 0);
  ASSERT_EQ(::chmod(job_dir.c_str(), 0711), 0);
  const std::string settings = cluster.dir() + "/slurm-submit.yaml";
  const std::string master_yaml = cluster.WriteFile(
      "master.yaml", "checkpoint_root: " + checkpoints +
                         "\nresource_pools:\n  - name: default\n    resource_manager:\n      type: slurm\n"
                         "      partition: " +
                         slurm->partition() +
                         "\n      slot_type: cpu\n      slots_per_node: 2\n      agent_binary: " + BinDir() +
                         "/ringagent\n      job_dir: " + job_dir +
                         "\n      poll_interval_ms: 200\n      agent_connect_timeout_ms: 60000\n"
                         "      submit_helper: " +
                         BinDir() + "/ring-slurm-submit\n      submit_helper_config: " + settings + "\n");
  TestCluster::MasterOptions master;
  master.host = slurm->bridge_address();
  master.extra_args = {"--config", master_yaml};
  cluster.StartMaster(master);
  {
    std::ofstream out(settings);
    out << "master_user: " << master_account.name() << "\nmaster_url: " << cluster.url()
        << "\nagent_binary: " << BinDir() << "/ringagent\njob_dir: " << job_dir
        << "\nmin_uid: 100\nslurm_conf: " << slurm->conf() << "\n";
  }
  ASSERT_EQ(::chmod(settings.c_str(), 0644), 0);
  const std::string helper = cluster.dir() + "/sbin/ring-slurm-submit";
  fs::create_directories(cluster.dir() + "/sbin");
  ASSERT_EQ(::chmod((cluster.dir() + "/sbin").c_str(), 0755), 0);
  fs::copy_file(BinDir() + "/ring-slurm-submit", helper);
  ASSERT_EQ(::chmod(helper.c_str(), 04755), 0);

  // `ring pool list` says whose account runs the pool's tasks.
  auto pools = cluster.Ring({"pool", "list"});
  ASSERT_EQ(pools.exit_code, 0) << pools.err;
  EXPECT_NE(pools.out.find("each owner"), std::string::npos) << pools.out;

  // An unlinked user cannot submit to the pool: there is no account to run as.
  const std::string dave_token = cluster.CreateUser("dave", "dave-password");
  const std::string model = cluster.dir() + "/model";
  fs::copy(BinDir() + "/../examples/quadratic/model", model, fs::copy_options::recursive);
  std::ofstream(model + "/probe.sh") << kProbe;
  const std::string config = cluster.WriteFile("as-owner.yaml", kConfig);
  auto refused = cluster.RingAs("dave", dave_token, {"experiment", "create", config, model});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("dave has none linked"), std::string::npos) << refused.err;

  // Carol, linked to the owner account, submits.
  const std::string carol_token = cluster.CreateUser("carol", "carol-password");
  ASSERT_EQ(cluster.Ring({"user", "link-unix", "carol", "--unix-user", owner.name()}).exit_code, 0);
  auto created = cluster.RingAs("carol", carol_token, {"experiment", "create", config, model});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;

  // Its job runs: Slurm runs it as carol's account, in a folder of hers.
  std::string allocation;
  int64_t job = 0;
  nlohmann::json seen;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto jobs = cluster.GetJson("/api/v1/jobs")["jobs"];
        if (!jobs.empty()) seen = jobs;
        for (const auto& j : jobs)
          if (j.contains("slurm_job_id") && j.value("slurm_state", "") == "RUNNING") {
            allocation = j.value("allocation_id", "");
            job = j["slurm_job_id"].get<int64_t>();
          }
        return job > 0;
      },
      60s))
      << seen.dump();
  const std::string folder = job_dir + "/" + allocation;
  EXPECT_EQ(OwnerOf(folder), owner.uid());
  EXPECT_EQ(OwnerOf(folder + "/credential"), owner.uid());
  auto user_of_job = slurm->Run({"squeue", "-h", "-j", std::to_string(job), "-o", "%U"});
  EXPECT_EQ(user_of_job.out, std::to_string(owner.uid()) + "\n") << user_of_job.err;
  const std::string credential = [&] {
    std::string c;
    std::ifstream(folder + "/credential") >> c;
    return c;
  }();
  ASSERT_FALSE(credential.empty());

  // The grant answers the allocation's own credential only.
  auto ask_grant = [&](const std::string& bearer) {
    HttpClient http(*Url::Parse(cluster.url()));
    http.SetBearerToken(bearer);
    auto res = http.Request("GET", "/api/v1/slurm/grants/" + allocation);
    EXPECT_TRUE(res.ok());
    return res.ok() ? *res : HttpResponse{};
  };
  const auto granted = ask_grant(credential);
  ASSERT_EQ(granted.status, 200) << granted.body;
  const auto grant = nlohmann::json::parse(granted.body);
  EXPECT_EQ(grant.value("uid", -1), static_cast<int64_t>(owner.uid())) << grant.dump();
  ASSERT_EQ(grant["nodes"].size(), 1u) << grant.dump();
  const std::string nodes = grant["nodes"][0].get<std::string>();
  EXPECT_EQ(ask_grant("made-up").status, 401);
  EXPECT_EQ(ask_grant(carol_token).status, 401) << "a user's token is no allocation's credential";

  // The attacks: each refused, and no job more in Slurm.
  const int jobs_before = CountJobs(*slurm);
  auto submit = [&](const TestAccount& as, const std::string& settings_file, const std::string& uid,
                    const std::string& secret, std::vector<std::string> options) {
    std::vector<std::string> argv = {"sh",
                                     "-c",
                                     "printf '%s\\n' \"$SECRET\" | \"$@\"",
                                     "submit-as",
                                     helper,
                                     "--config",
                                     settings_file,
                                     "submit",
                                     "--allocation",
                                     allocation,
                                     "--uid",
                                     uid,
                                     "--gid",
                                     std::to_string(owner.gid()),
                                     "--"};
    argv.insert(argv.end(), options.begin(), options.end());
    return RunCommand(as.As(argv), {{"SECRET", secret}});
  };
  const std::vector<std::string> same_job = {"--partition=" + slurm->partition(), "--nodes=1",
                                             "--nodelist=" + nodes, "--ntasks-per-node=1",
                                             "--cpus-per-task=2"};
  const std::string carol_uid = std::to_string(owner.uid());
  struct Attack {
    std::string what;
    CommandResult result;
    std::string expected;
  };
  // Eve's own settings file, naming herself the master's account.
  fs::create_directories(cluster.dir() + "/eve");
  const std::string eve_settings = cluster.dir() + "/eve/settings.yaml";
  fs::copy_file(settings, eve_settings);
  { std::ofstream(eve_settings, std::ios::app) << "\n"; }
  ASSERT_EQ(::chown((cluster.dir() + "/eve").c_str(), eve.uid(), eve.gid()), 0);
  ASSERT_EQ(::chown(eve_settings.c_str(), eve.uid(), eve.gid()), 0);
  std::vector<Attack> attacks = {
      {"another account calls it", submit(eve, settings, carol_uid, credential, same_job), "may not call"},
      {"its caller's own settings", submit(eve, eve_settings, carol_uid, credential, same_job),
       "is not owned by root"},
      {"a made-up credential", submit(master_account, settings, carol_uid, "made-up", same_job),
       "does not know allocation"},
      {"a real credential, another account",
       submit(master_account, settings, std::to_string(eve.uid()), credential, same_job),
       "the allocation's owner is uid"},
      {"a real credential, root", submit(master_account, settings, "0", credential, same_job),
       "never run as uid 0"},
      {"an option that runs something else",
       submit(master_account, settings, carol_uid, credential, {"--wrap=id", "--nodelist=" + nodes}),
       "--wrap is the submit helper's"},
      {"other nodes", submit(master_account, settings, carol_uid, credential, {"--nodelist=n9"}),
       "the allocation's nodes are"},
      {"a second job for the allocation", submit(master_account, settings, carol_uid, credential, same_job),
       "exists"},
  };
  for (const auto& a : attacks) {
    EXPECT_NE(a.result.exit_code, 0) << a.what << ": " << a.result.out << a.result.err;
    EXPECT_NE(a.result.err.find(a.expected), std::string::npos) << a.what << ": " << a.result.err;
  }
  EXPECT_EQ(CountJobs(*slurm), jobs_before) << "an attack submitted a job";

  // Cancelling: only Ringmaster's jobs, never another account's own.
  auto eves_job = RunCommand(eve.As({"sbatch", "--parsable", "--job-name=ring-" + allocation, "--chdir=/tmp",
                                     "--partition=" + slurm->partition(), "--wrap=sleep 120"}),
                             slurm->env());
  ASSERT_EQ(eves_job.exit_code, 0) << eves_job.err;
  const std::string eves_id = eves_job.out.substr(0, eves_job.out.find_first_of(";\n"));
  auto cancel = RunCommand(master_account.As({helper, "--config", settings, "cancel", "--job", eves_id}));
  EXPECT_NE(cancel.exit_code, 0) << cancel.out << cancel.err;
  EXPECT_NE(cancel.err.find("is not a Ringmaster allocation's job"), std::string::npos) << cancel.err;
  auto still = slurm->Run({"squeue", "-h", "-j", eves_id, "-o", "%T"});
  EXPECT_NE(still.out.find_first_of("PR"), std::string::npos) << "eve's job was cancelled: " << still.out;
  slurm->Run({"scancel", eves_id});

  // A command of hers on the pool runs in a job of its own as her account too.
  auto command = cluster.RingAs("carol", carol_token,
                                {"cmd", "run", "--", "sh", "-c", "echo command uid=$(id -u) gid=$(id -g)"});
  EXPECT_EQ(command.exit_code, 0) << command.out << command.err;
  EXPECT_NE(command.out.find("command uid=" + carol_uid + " gid=" + std::to_string(owner.gid())),
            std::string::npos)
      << command.out << command.err;

  // The trial completes, its checkpoints are carol's.
  const std::string state = WaitFinalState(cluster, 1, 120s);
  const auto logs = cluster.GetJson("/api/v1/trials/1/logs?limit=1000");
  EXPECT_EQ(state, "COMPLETED") << logs.dump(1);
  bool probed = false;
  for (const auto& line : logs["logs"])
    probed =
        probed || line.value("line", "") == "probe uid=" + carol_uid + " gid=" + std::to_string(owner.gid());
  EXPECT_TRUE(probed) << "the trial did not run as carol's account: " << logs.dump(1);
  auto listed = cluster.GetJson("/api/v1/trials/1/checkpoints");
  int checked = 0;
  for (const auto& c : listed["checkpoints"])
    for (const auto& entry : fs::recursive_directory_iterator(checkpoints))
      if (entry.is_directory() && entry.path().filename() == c.value("uuid", "")) {
        EXPECT_EQ(OwnerOf(entry.path()), owner.uid()) << entry.path();
        ++checked;
      }
  EXPECT_GT(checked, 0) << listed.dump();
  slurm->WaitIdle(30s);
}

}  // namespace
}  // namespace ring::testing::slurm_identity_e2e
