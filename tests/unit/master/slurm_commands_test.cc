// What the Slurm resource manager hands Slurm and how it runs Slurm's
// commands: the sbatch options and batch script of a job, the real
// commands (bounded by their timeout, the job's folder for its user only,
// the submit helper's arguments), and the job agents' ids and hellos.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "master/rm/slurmrm/job_agent_admission.h"
#include "master/rm/slurmrm/slurm_commands.h"
#include "master/rm/slurmrm/slurm_job_script.h"

namespace ring {
namespace slurm_commands_test {
namespace {

TEST(SlurmJobScript, AsksForSlotsAsSlurmUnderstandsThem) {
  SlurmPoolOptions pool;
  pool.partition = "gpu";
  pool.qos = "high";
  pool.sbatch_args = {"--time=60"};
  pool.slot_type = SlurmSlotType::kCuda;
  SlurmJobRequest job{"7.0", {"n1", "n2"}, 4, true, 42};
  auto args = SbatchArgs(pool, job);
  auto has = [&](const std::string& a) { return std::find(args.begin(), args.end(), a) != args.end(); };
  EXPECT_TRUE(has("--partition=gpu"));
  EXPECT_TRUE(has("--qos=high"));
  EXPECT_TRUE(has("--nodes=2"));
  EXPECT_TRUE(has("--nodelist=n1,n2"));
  EXPECT_TRUE(has("--ntasks-per-node=1"));
  EXPECT_TRUE(has("--gres=gpu:4"));
  EXPECT_TRUE(has("--exclusive"));
  EXPECT_EQ(args.back(), "--time=60");  // the pool's own last
  EXPECT_TRUE(has("--nice=4100"));      // (42 - 1) * 100
  EXPECT_FALSE(has("--job-name=ring-7.0")) << "the submitter names the job";
  pool.slot_type = SlurmSlotType::kCpu;
  job.whole_nodes = false;
  args = SbatchArgs(pool, job);
  EXPECT_TRUE(has("--cpus-per-task=4"));
  EXPECT_FALSE(has("--exclusive"));
  EXPECT_FALSE(has("--gres=gpu:4"));

  // Priority: the nice step, and the QOS of the first band that holds it.
  pool.nice_per_priority = 10;
  pool.priority_qos = {{20, "urgent"}, {60, "normal"}};
  job.priority = 1;
  args = SbatchArgs(pool, job);
  EXPECT_TRUE(has("--qos=urgent"));
  EXPECT_TRUE(std::none_of(args.begin(), args.end(), [](const std::string& a) {
    return a.rfind("--nice", 0) == 0;
  })) << "priority 1 is the most important: no --nice";
  job.priority = 50;
  args = SbatchArgs(pool, job);
  EXPECT_TRUE(has("--qos=normal"));
  EXPECT_TRUE(has("--nice=490"));
  job.priority = 99;
  args = SbatchArgs(pool, job);
  EXPECT_TRUE(has("--qos=high")) << "past every band: the pool's qos";
  pool.nice_per_priority = 0;
  args = SbatchArgs(pool, job);
  EXPECT_TRUE(
      std::none_of(args.begin(), args.end(), [](const std::string& a) { return a.rfind("--nice", 0) == 0; }));

  const std::string script =
      BatchScript({"/opt/ring agent", "http://m:1", "7.0", "/jobs/7.0/credential", ""});
  EXPECT_NE(script.find("exec srun --ntasks-per-node=1"), std::string::npos) << script;
  EXPECT_NE(script.find("'/opt/ring agent' --slurm-allocation '7.0'"), std::string::npos) << script;
  EXPECT_EQ(script.find("--container-runtimes"), std::string::npos) << script;
  const std::string with_runtime =
      BatchScript({"/opt/ring agent", "http://m:1", "7.0", "/jobs/7.0/credential", "", "podman"});
  EXPECT_NE(with_runtime.find("--credential-file '/jobs/7.0/credential' --container-runtimes 'podman'\n"),
            std::string::npos)
      << with_runtime;
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ReservedSbatchOption("--gres=gpu:1"), "--gres");
  EXPECT_EQ(ReservedSbatchOption("-N2"), "-N");
  EXPECT_EQ(ReservedSbatchOption("--time=5"), "");
}

// How the real commands are run: both streams captured, a hung command
// killed at its timeout, a missing program an exit code rather than a throw.
TEST(SlurmCommandsTest, ProgramsAreBoundedByTheirTimeout) {
  auto echoed = RunProgram({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(5));
  EXPECT_EQ(echoed.exit_code, 3);
  EXPECT_EQ(echoed.out, "out\n");
  EXPECT_EQ(echoed.err, "err\n");
  const auto start = std::chrono::steady_clock::now();
  auto hung = RunProgram({"sleep", "30"}, std::chrono::milliseconds(200));
  EXPECT_EQ(hung.exit_code, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(RunProgram({"/nonexistent/sbatch"}, std::chrono::seconds(5)).exit_code, 127);
}

// The real commands as the master's own account: the job's folder and
// credential are the job user's alone, and sbatch names the job and its
// output (a stand-in sbatch on PATH records its arguments).
TEST(SlurmCommandsTest, SbatchWritesTheFolderForTheJobsUserOnly) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("slurm-commands-" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "bin" / "sbatch")
      << "#!/bin/sh\necho \"$@\" > " << (dir / "args").string() << "\necho '77;cluster'\n";
  fs::permissions(dir / "bin" / "sbatch", fs::perms::owner_all);
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", ((dir / "bin").string() + ":" + path).c_str(), 1);
  ProcessSlurmCommands commands;
  SbatchJob job{"3.1",         {"--partition=p"}, (dir / "jobs" / "3.1").string(),
                "#!/bin/sh\n", "secret",          std::nullopt};
  auto id = commands.Sbatch(job);
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, 77);
  EXPECT_EQ(fs::status(job.folder).permissions(), fs::perms::owner_all);
  EXPECT_EQ(fs::status(job.folder + "/credential").permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(job.folder + "/job.sh").permissions(), fs::perms::owner_all);
  std::ifstream in(dir / "args");
  std::string args((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(args.find("--parsable --job-name=ring-3.1 --output=" + job.folder +
                      "/slurm-%j.out --partition=p " + job.folder + "/job.sh"),
            std::string::npos)
      << args;
  EXPECT_FALSE(ParseSbatchAnswer("Submitted batch job 5").ok());
  fs::remove_all(dir);
}

// A pool with a submit helper hands it the owner's ids and the credential
// (stdin), never a script: a stand-in helper records what it got.
TEST(SlurmCommandsTest, TheSubmitHelperGetsTheOwnerAndTheCredentialOnly) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("slurm-helper-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string helper = (dir / "helper").string();
  std::ofstream(helper) << "#!/bin/sh\necho \"$@\" > " << (dir / "args").string() << "\ncat > "
                        << (dir / "stdin").string() << "\necho 81\n";
  fs::permissions(helper, fs::perms::owner_all);
  HelperSlurmCommands commands(helper, "/etc/x.yaml");
  SbatchJob job{"4.0", {"--partition=p"}, (dir / "4.0").string(), "#!/bin/sh\n", "secret", std::nullopt};
  EXPECT_EQ(commands.Sbatch(job).status().code(), ErrorCode::kPermissionDenied) << "an unlinked owner";
  job.run_as = proto::RunAs{1500, 1600, "carol", "carol"};
  auto id = commands.Sbatch(job);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, 81);
  auto read = [&](const char* name) {
    std::ifstream in(dir / name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read("args"),
            "--config /etc/x.yaml submit --allocation 4.0 --uid 1500 --gid 1600 -- --partition=p\n");
  EXPECT_EQ(read("stdin"), "secret\n");
  EXPECT_FALSE(fs::exists(job.folder)) << "the helper makes the folder, as the owner";
  ASSERT_TRUE(commands.Scancel(81, "TERM").ok());
  EXPECT_EQ(read("args"), "--config /etc/x.yaml cancel --job 81 --signal TERM\n");
  fs::remove_all(dir);
}

TEST(JobAgentAdmission, IdsAndHellos) {
  auto id = ParseJobAgentId("slurm.42.gpu-node-7");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->job_id, 42);
  EXPECT_EQ(id->node, "gpu-node-7");
  EXPECT_FALSE(ParseJobAgentId("slurm..n1"));
  EXPECT_FALSE(ParseJobAgentId("slurm.4x.n1"));
  EXPECT_FALSE(ParseJobAgentId("slurm.42."));
  EXPECT_FALSE(ParseJobAgentId("agent-1"));
  EXPECT_EQ(JobAgentIdFor(42, "n1"), "slurm.42.n1");
  proto::Hello hello;
  hello.agent_id = "slurm.42.n1";
  hello.running = {{"A", 0, 10}, {"B", 0, 11}};
  auto verdict = JudgeJobAgentHello(hello, "slurm.42.n1", "A");
  EXPECT_FALSE(verdict.refused);
  EXPECT_TRUE(verdict.trimmed);
  ASSERT_EQ(verdict.running.size(), 1u);
  EXPECT_EQ(verdict.running[0].allocation_id, "A");
}

}  // namespace
}  // namespace slurm_commands_test
}  // namespace ring
