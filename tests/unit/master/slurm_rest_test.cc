// A Slurm pool through slurmrestd: the job description its sbatch options
// become, the tokens the master signs for each owner, the key it refuses
// to use when others may read it, the batch script that takes the
// credential from the job's environment, and master.yaml's rest settings.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "master/master_config.h"
#include "master/rm/slurmrm/slurm_job_script.h"
#include "master/rm/slurmrm/slurm_rest_commands.h"
#include "master/rm/slurmrm/slurm_rest_job.h"

namespace ring {
namespace slurm_rest_test {
namespace {

namespace fs = std::filesystem;

TEST(SlurmRestJob, SbatchOptionsBecomeTheJobDescriptionsFields) {
  RestJobSubmission job;
  job.name = "ring-3.0";
  job.options = {"--partition=p",     "--nodes=2",   "--nodelist=n1,n2", "--ntasks-per-node=1",
                 "--cpus-per-task=2", "--exclusive", "--nice=100",       "--time=60",
                 "--mem=4G",          "--requeue",   "--constraint=a100"};
  job.script = "#!/bin/sh\n";
  job.environment = {{"PATH", "/bin"}};
  job.output = "/shared/out/ring-3.0-%j.out";
  auto body = RestJobBody(job);
  ASSERT_TRUE(body.ok()) << body.status().message();
  const auto& f = (*body)["job"];
  EXPECT_EQ((*body)["script"], "#!/bin/sh\n");
  EXPECT_EQ(f["partition"], "p");
  EXPECT_EQ(f["nodes"], "2");
  EXPECT_EQ(f["nodelist"], "n1,n2");
  EXPECT_EQ(f["ntasks_per_node"], "1");
  EXPECT_EQ(f["cpus_per_task"], "2");
  EXPECT_EQ(f["exclusive"], "exclusive");  // Slurm's word for whole nodes
  EXPECT_EQ(f["nice"], "100");
  EXPECT_EQ(f["time_limit"], "60");
  EXPECT_EQ(f["memory_per_node"], "4G");
  EXPECT_EQ(f["requeue"], true);
  EXPECT_EQ(f["constraints"], "a100");
  EXPECT_EQ(f["name"], "ring-3.0");
  EXPECT_EQ(f["standard_output"], "/shared/out/ring-3.0-%j.out");
  EXPECT_EQ(f["standard_error"], "/shared/out/ring-3.0-%j.out");
  EXPECT_EQ(f["current_working_directory"], "/tmp");
  EXPECT_EQ(f["environment"]["PATH"], "/bin");
}

TEST(SlurmRestJob, OptionsWithoutAFieldAreRefusedByName) {
  for (const auto& [option, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--wrap=id", "--wrap has no field"},
           {"--x11", "--x11 has no field"},
           {"-t 5", "is not a long sbatch option"},
           {"--", "is not a long sbatch option"},
       }) {
    auto field = RestJobField(option);
    ASSERT_FALSE(field.ok()) << option;
    EXPECT_NE(field.status().message().find(expected), std::string::npos) << field.status().message();
  }
  RestJobSubmission job;
  job.options = {"--partition=p", "--bell"};
  EXPECT_FALSE(RestJobBody(job).ok());
}

// The same token Python's hmac gives for this key, user and time.
TEST(SlurmRestTokens, AreHs256JwtsOfTheUserSignedWithTheKey) {
  EXPECT_EQ(SlurmJwt("0123456789abcdef0123456789abcdef", "carol", 1700000000, std::chrono::seconds(300)),
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
            "eyJleHAiOjE3MDAwMDAzMDAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoiY2Fyb2wifQ."
            "nl34CPkQih9gchyXKdK2H_7BdRg8gE9gb2XyvSG_y0c");
  EXPECT_NE(SlurmJwt("another key of 32 bytes, exactly", "carol", 1700000000, std::chrono::seconds(300)),
            SlurmJwt("0123456789abcdef0123456789abcdef", "carol", 1700000000, std::chrono::seconds(300)));
}

TEST(SlurmRestTokens, TheKeyMustBeItsOwnersAlone) {
  char tmpl[] = "/tmp/ring-jwt-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string key = dir + "/jwt.key";
  std::ofstream(key) << "0123456789abcdef0123456789abcdef";
  ASSERT_EQ(::chmod(key.c_str(), 0600), 0);
  auto read = ReadSlurmJwtKey(key);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, "0123456789abcdef0123456789abcdef");
  ASSERT_EQ(::chmod(key.c_str(), 0640), 0);
  auto shared = ReadSlurmJwtKey(key);
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("may be read by others"), std::string::npos);
  ASSERT_EQ(::chmod(key.c_str(), 0600), 0);
  fs::create_symlink(key, dir + "/link");
  EXPECT_FALSE(ReadSlurmJwtKey(dir + "/link").ok()) << "a link is not followed";
  std::ofstream(dir + "/short") << "tiny";
  ASSERT_EQ(::chmod((dir + "/short").c_str(), 0600), 0);
  EXPECT_FALSE(ReadSlurmJwtKey(dir + "/short").ok());
  EXPECT_FALSE(ReadSlurmJwtKey(dir + "/missing").ok());
  fs::remove_all(dir);
}

TEST(SlurmRestJobScript, TakesTheCredentialFromTheJobsEnvironment) {
  const std::string script = BatchScript({"/opt/ringagent", "http://m:8080", "4.0", "", "", ""});
  EXPECT_NE(script.find("--credential-env RING_ALLOCATION_CREDENTIAL"), std::string::npos) << script;
  EXPECT_EQ(script.find("--credential-file"), std::string::npos) << script;
}

class SlurmRestConfig : public ::testing::Test {
 protected:
  Result<MasterConfig> Load(const std::string& yaml) {
    const std::string path = dir_ + "/master.yaml";
    std::ofstream(path) << yaml;
    return MasterConfig::FromYamlFile(path);
  }
  void SetUp() override {
    char tmpl[] = "/tmp/ring-restcfg-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

const std::string kHead =
    "resource_pools:\n  - name: hpc\n    resource_manager:\n      type: slurm\n      partition: p\n"
    "      agent_binary: /opt/ringagent\n";

TEST_F(SlurmRestConfig, ParsesAndJobsRunAsTheirOwners) {
  auto c = Load(kHead +
                "      sbatch_args: [--time=60]\n      rest:\n        url: https://slurm-head:6820\n"
                "        user: ringmaster\n        jwt_key_file: /etc/ringmaster/slurm-jwt.key\n"
                "        output_dir: /shared/slurm-out\n        token_lifespan_s: 120\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& s = c->slurm_pools[0];
  EXPECT_TRUE(s.uses_rest());
  EXPECT_FALSE(s.single_identity);
  EXPECT_EQ(s.rest.url, "https://slurm-head:6820");
  EXPECT_EQ(s.rest.user, "ringmaster");
  EXPECT_EQ(s.rest.jwt_key_file, "/etc/ringmaster/slurm-jwt.key");
  EXPECT_EQ(s.rest.api_version, "v0.0.38");
  EXPECT_EQ(s.rest.output_dir, "/shared/slurm-out");
  EXPECT_EQ(s.rest.token_lifespan, std::chrono::seconds(120));
}

TEST_F(SlurmRestConfig, MistakesNameTheKeyAndLine) {
  const std::string rest =
      "      rest:\n        url: http://h:6820\n        user: svc\n        jwt_key_file: /k\n";
  for (const auto& [yaml, expected] : std::vector<std::pair<std::string, std::string>>{
           {kHead + "      rest:\n        url: h:6820\n        user: svc\n        jwt_key_file: /k\n",
            ":8: resource_pools[0].resource_manager.rest.url must start with http:// or https://"},
           {kHead + "      rest:\n        url: http://h\n        user: root\n        jwt_key_file: /k\n",
            ":9: resource_pools[0].resource_manager.rest.user must not be root"},
           {kHead + "      rest:\n        url: http://h\n        user: svc\n", "rest needs url"},
           {kHead + "      rest:\n        url: http://h\n        user: svc\n        jwt_key_file: k\n",
            ":10: resource_pools[0].resource_manager.rest.jwt_key_file must be an absolute path"},
           {kHead + rest + "        token: abc\n",
            ":11: unknown key \"resource_pools[0].resource_manager.rest.token\""},
           {kHead + rest + "        token_lifespan_s: 5\n", "token_lifespan_s must be from 30"},
           {kHead + rest + "      single_identity: true\n", "excludes submit_helper and single_identity"},
           {kHead + rest + "      sbatch_args: [--x11]\n", "sbatch_args: --x11 has no field"},
           {kHead + rest + "      sbatch_args: [-t 5]\n",
            "sbatch_args: \"-t 5\" is not a long sbatch option"},
       }) {
    auto c = Load(yaml);
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_NE(c.status().message().find(expected), std::string::npos) << yaml << c.status().message();
  }
}

}  // namespace
}  // namespace slurm_rest_test
}  // namespace ring
