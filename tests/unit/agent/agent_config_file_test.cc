// ringagent --config: the shipped example loads, every key lands in its
// setting, and unknown keys or wrong types are refused naming file and line.
#include "agent/agent_config_file.h"

#include <gtest/gtest.h>

#include <fstream>

namespace ring {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(AgentConfigFile, TheShippedExampleLoads) {
  AgentConfig c;
  std::string format = "text";
  Status s = LoadAgentConfigFile(std::string(RING_SOURCE_DIR) + "/configs/agent.yaml", c, format);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(c.master_url, "https://ringmaster.example.internal:8443");
  EXPECT_EQ(c.token_file, "/etc/ringmaster/cluster-token");
}

TEST(AgentConfigFile, EveryKeyIsRead) {
  AgentConfig c;
  std::string format = "text";
  const std::string path = Write("agent-all.yaml", R"(master: http://10.0.0.1:8080
id: a1
pool: gpu
cpu_slots: 4
gpus: false
work_dir: /srv/work
token_file: /etc/t
ca_file: /etc/ca.crt
address: 10.0.0.11
log_level: debug
log_format: json
shutdown_grace_ms: 2500
single_user: true
unlinked_user: ringtrials
allow_root_trials: true
containment: freezer
)");
  ASSERT_TRUE(LoadAgentConfigFile(path, c, format).ok());
  EXPECT_EQ(c.master_url, "http://10.0.0.1:8080");
  EXPECT_EQ(c.id, "a1");
  EXPECT_EQ(c.pool, "gpu");
  EXPECT_EQ(c.cpu_slots, 4);
  EXPECT_FALSE(c.detect_gpus);
  EXPECT_EQ(c.work_dir, "/srv/work");
  EXPECT_EQ(c.token_file, "/etc/t");
  EXPECT_EQ(c.ca_file, "/etc/ca.crt");
  EXPECT_EQ(c.address, "10.0.0.11");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(format, "json");
  EXPECT_EQ(c.shutdown_grace, std::chrono::milliseconds(2500));
  EXPECT_TRUE(c.single_user);
  EXPECT_EQ(c.unlinked_user, "ringtrials");
  EXPECT_TRUE(c.allow_root_trials);
  EXPECT_EQ(c.containment, "freezer");
}

TEST(AgentConfigFile, UnknownKeysAndWrongTypesNameTheLine) {
  AgentConfig c;
  std::string format = "text";
  const std::string typo = Write("agent-typo.yaml", "master: http://m:1\npoool: gpu\n");
  Status s = LoadAgentConfigFile(typo, c, format);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find(typo + ":2: unknown key \"poool\""), std::string::npos) << s.message();
  const std::string wrong = Write("agent-type.yaml", "master: http://m:1\ncpu_slots: many\n");
  s = LoadAgentConfigFile(wrong, c, format);
  EXPECT_NE(s.message().find(wrong + ":2: cpu_slots has the wrong type"), std::string::npos) << s.message();
  EXPECT_EQ(LoadAgentConfigFile("/no/such/agent.yaml", c, format).code(), ErrorCode::kInvalidArgument);
}

TEST(AgentConfigFile, TheConfigArgumentIsFoundInEitherForm) {
  const char* a[] = {"ringagent", "--pool", "x", "--config", "/etc/a.yaml"};
  EXPECT_EQ(ConfigFileArgument(5, const_cast<char**>(a)), "/etc/a.yaml");
  const char* b[] = {"ringagent", "--config=/etc/b.yaml"};
  EXPECT_EQ(ConfigFileArgument(2, const_cast<char**>(b)), "/etc/b.yaml");
  const char* none[] = {"ringagent", "--master", "http://m:1"};
  EXPECT_EQ(ConfigFileArgument(3, const_cast<char**>(none)), "");
}

}  // namespace
}  // namespace ring
