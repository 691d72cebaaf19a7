// master.yaml: the shipped file loads, pools parse, and mistakes name the key and line.
#include "master/master_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ring {
namespace {

class MasterConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("master-" + std::to_string(::getpid()) + ".yaml"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  Result<MasterConfig> Load(const std::string& text) {
    std::ofstream(path_) << text;
    return MasterConfig::FromYamlFile(path_);
  }
  std::string path_;
};

TEST_F(MasterConfigTest, TheShippedFileLoads) {
  auto c = MasterConfig::FromYamlFile(RING_SOURCE_DIR "/configs/master.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->reconnect_window_ms, 25000);
  ASSERT_EQ(c->resource_pools.size(), 1u);
  EXPECT_EQ(c->resource_pools[0].name, "default");
}

TEST_F(MasterConfigTest, PoolsParseWithTheirPolicies) {
  auto c = Load(
      "resource_pools:\n  - name: gpu\n    description: A100s\n    scheduler:\n      type: fair_share\n"
      "      preemption: false\n      fitting_policy: worst\n  - name: cpu\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->resource_pools.size(), 2u);
  EXPECT_EQ(c->resource_pools[0].scheduler, "fair_share");
  EXPECT_FALSE(c->resource_pools[0].preemption);
  EXPECT_EQ(c->resource_pools[0].fitting_policy, "worst");
  EXPECT_EQ(c->resource_pools[1].scheduler, "priority");
  EXPECT_TRUE(c->resource_pools[1].preemption);
  EXPECT_EQ(MasterConfig{}.resource_pools.size(), 1u);  // without the key: "default"
  EXPECT_EQ(c->resource_pools[0].launch, LaunchMode::kAuto);
  auto l = Load("resource_pools:\n  - name: gpu\n    launch: per_node\n");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->resource_pools[0].launch, LaunchMode::kPerNode);
}

TEST_F(MasterConfigTest, APoolMayRequireAContainerRuntime) {
  auto c = Load("resource_pools:\n  - name: gpu\n    container_runtime: podman\n  - name: cpu\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->resource_pools[0].container_runtime, "podman");
  EXPECT_EQ(c->resource_pools[1].container_runtime, "");  // any runtime its agents have
  auto bad = Load("resource_pools:\n  - name: gpu\n    container_runtime: lxc\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":3: resource_pools[0].container_runtime must be one of podman"),
            std::string::npos)
      << bad.status().message();
}

TEST_F(MasterConfigTest, CheckpointStorageAndDownloadSettings) {
  auto c = Load(
      "checkpoint_storage:\n  allowed_roots: [/mnt/a, /mnt/b]\nexperiments_team_readable: false\n"
      "max_streamed_answers: 2\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->checkpoint_allowed_roots, (std::vector<std::string>{"/mnt/a", "/mnt/b"}));
  EXPECT_FALSE(c->experiments_team_readable);
  EXPECT_EQ(c->max_streamed_answers, 2);
  EXPECT_TRUE(MasterConfig{}.experiments_team_readable) << "team-readable by default, as in Determined";
}

TEST_F(MasterConfigTest, ConnectionCapExemptAddressesParseAndMistakesNameTheLine) {
  auto c =
      Load("max_connections_per_address: 64\nconnection_cap_exempt_addresses: [10.1.0.0/16, 127.0.0.2]\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->connection_cap_exempt_addresses, (std::vector<std::string>{"10.1.0.0/16", "127.0.0.2"}));
  EXPECT_TRUE(Load("max_connections: 10\n")->connection_cap_exempt_addresses.empty());  // none by default
  auto bad = Load("threads: 2\nconnection_cap_exempt_addresses:\n  - 10.0.0.1\n  - 10.0.0.0/33\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":4: connection_cap_exempt_addresses: \"10.0.0.0/33\" has a prefix"),
            std::string::npos)
      << bad.status().message();
  auto word = Load("connection_cap_exempt_addresses: [agents]\n");
  ASSERT_FALSE(word.ok());
  EXPECT_NE(word.status().message().find("\"agents\" is not an IP address"), std::string::npos)
      << word.status().message();
}

TEST_F(MasterConfigTest, AgentThreadsAndTheirNiceValueAreBounded) {
  EXPECT_EQ(MasterConfig{}.agent_threads, 1);
  EXPECT_EQ(MasterConfig{}.agent_threads_nice, 5);
  EXPECT_EQ(MasterConfig{}.thread_slice_us, 100);
  EXPECT_TRUE(Load("thread_slice_us: 0\n")->Finalize("ringmaster").ok());
  auto c = Load("agent_threads: 0\nagent_threads_nice: 19\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->agent_threads, 0);  // on the io threads
  EXPECT_EQ(c->agent_threads_nice, 19);
  for (const auto& [yaml, message] : std::vector<std::pair<std::string, std::string>>{
           {"agent_threads: -1\n", "agent_threads must be from 0 to 64"},
           {"agent_threads: 65\n", "agent_threads must be from 0 to 64"},
           {"agent_threads_nice: 20\n", "agent_threads_nice must be from 0 to 19"},
           {"agent_threads_nice: -1\n", "agent_threads_nice must be from 0 to 19"},
           {"thread_slice_us: 99\n", "thread_slice_us must be 0 (the kernel's) or from 100 to 100000"},
           {"thread_slice_us: 100001\n", "thread_slice_us must be 0"}}) {
    auto loaded = Load(yaml);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const Status bad = loaded->Finalize("ringmaster");  // where the ranges are checked
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_NE(bad.message().find(message), std::string::npos) << bad.message();
  }
}

TEST_F(MasterConfigTest, SlurmPoolsParseAndAgentsStayTheDefault) {
  auto c = Load(
      "resource_pools:\n  - name: default\n  - name: hpc\n    resource_manager:\n      type: slurm\n"
      "      partition: gpu\n      account: ml\n      qos: normal\n      sbatch_args: [--time=60, -C a100]\n"
      "      slots_per_node: 4\n      slot_type: cpu\n      agent_binary: /opt/ring/bin/ringagent\n"
      "      poll_interval_ms: 500\n      agent_ca_file: /etc/ring/ca.crt\n      single_identity: true\n"
      "      nice_per_priority: 5\n      priority_qos: [{max_priority: 10, qos: high}]\n  - name: own\n    "
      "resource_manager: {type: agent}\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->resource_pools.size(), 3u);
  ASSERT_EQ(c->slurm_pools.size(), 1u);
  const auto& s = c->slurm_pools[0];
  EXPECT_EQ(s.pool, "hpc");
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.account, "ml");
  EXPECT_EQ(s.qos, "normal");
  EXPECT_EQ(s.sbatch_args, (std::vector<std::string>{"--time=60", "-C a100"}));
  EXPECT_EQ(s.slots_per_node, 4);
  EXPECT_EQ(s.slot_type, SlurmSlotType::kCpu);
  EXPECT_EQ(s.agent_binary, "/opt/ring/bin/ringagent");
  EXPECT_EQ(s.poll_interval, std::chrono::milliseconds(500));
  EXPECT_EQ(s.agent_ca_file, "/etc/ring/ca.crt");
  EXPECT_TRUE(s.single_identity);
  EXPECT_EQ(s.nice_per_priority, 5);
  ASSERT_EQ(s.priority_qos.size(), 1u);
  EXPECT_EQ(s.priority_qos[0].qos, "high");
  auto helper = Load(
      "resource_pools:\n  - name: hpc\n    resource_manager:\n      type: slurm\n      partition: p\n"
      "      agent_binary: /opt/ringagent\n      submit_helper: /usr/local/sbin/ring-slurm-submit\n");
  ASSERT_TRUE(helper.ok()) << helper.status().message();
  EXPECT_FALSE(helper->slurm_pools[0].single_identity);
  EXPECT_EQ(helper->slurm_pools[0].submit_helper, "/usr/local/sbin/ring-slurm-submit");
  EXPECT_TRUE(Load("resource_pools:\n  - name: a\n")->slurm_pools.empty());
  EXPECT_EQ(s.container_runtime, "");
}

TEST_F(MasterConfigTest, ASlurmPoolDeclaresItsNodesContainerRuntime) {
  const std::string head =
      "resource_pools:\n  - name: hpc\n    resource_manager:\n      type: slurm\n      partition: p\n"
      "      agent_binary: /bin/ringagent\n      single_identity: true\n";
  auto c = Load(head + "      container_runtime: podman\n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->slurm_pools[0].container_runtime, "podman");
  EXPECT_EQ(c->resource_pools[0].container_runtime, "podman");  // what trials with an image use there
  // The pool's own key says the same.
  auto p = Load(head + "    container_runtime: apptainer\n");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->slurm_pools[0].container_runtime, "apptainer");
  auto bad = Load(head + "      container_runtime: lxc\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                ":8: resource_pools[0].resource_manager.container_runtime must be one of podman, docker"),
            std::string::npos)
      << bad.status().message();
  auto both = Load(head + "      container_runtime: podman\n    container_runtime: docker\n");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("disagree"), std::string::npos) << both.status().message();
}

TEST_F(MasterConfigTest, SlurmMistakesNameTheKeyAndLine) {
  const std::string head = "resource_pools:\n  - name: a\n    resource_manager:\n";
  const std::string ok =
      "      partition: p\n      agent_binary: /bin/ringagent\n      single_identity: true\n";
  const std::string helper =
      "      partition: p\n      agent_binary: /bin/ringagent\n      submit_helper: /sbin/h\n";
  struct Case {
    std::string yaml, expected;
  };
  for (const auto& [yaml, expected] : std::vector<Case>{
           {head + "      type: pbs\n", ":4: resource_pools[0].resource_manager.type must be agent or slurm"},
           {head + "      type: slurm\n      agent_binary: /x\n",
            "resource_pools[0].resource_manager.partition is required"},
           {head + "      type: slurm\n      partition: p\n", "agent_binary is required"},
           {head + "      type: slurm\n" + ok + "      slot_type: tpu\n",
            ":8: resource_pools[0].resource_manager.slot_type must be cuda or cpu, got \"tpu\""},
           {
               head + "      type: slurm\n" + ok + "      slots_per_node: -1\n",
               ":8: resource_pools[0].resource_manager.slots_per_node must be from 0",
           },
           {head + "      type: slurm\n" + ok + "      slots_per_node: many\n",
            "resource_manager.slots_per_node must be an integer"},
           {head + "      type: slurm\n" + ok + "      sbatch_args: [--gres=gpu:8]\n",
            "sbatch_args: --gres is set by the resource manager"},
           {head + "      type: slurm\n" + ok + "      sbatch_args: [-N2]\n", "sbatch_args: -N is set"},
           {head + "      type: slurm\n" + ok + "      sbatch_args: --time=1\n",
            "must be a list of sbatch options"},
           {head + "      type: slurm\n      partition: p\n      agent_binary: bin/ringagent\n",
            ":6: resource_pools[0].resource_manager.agent_binary must be an absolute path"},
           {head + "      type: slurm\n" + ok + "      nodes: 3\n",
            ":8: unknown key \"resource_pools[0].resource_manager.nodes\""},
           {head + "      type: slurm\n      partition: p\n      agent_binary: /bin/ringagent\n",
            ":4: resource_pools[0].resource_manager: say whose account runs the jobs: submit_helper"},
           {head + "      type: slurm\n" + helper + "      single_identity: true\n", "exclude each other"},
           {head + "      type: slurm\n" + helper + "      sbatch_args: [-t 5]\n",
            "with a submit_helper each option is one --name or --name=value, got \"-t 5\""},
           {head + "      type: slurm\n" + helper + "      submit_helper_config: etc/x.yaml\n",
            ":8: resource_pools[0].resource_manager.submit_helper_config must be an absolute path"},
           {head + "      type: slurm\n" + ok + "      single_identity: maybe\n",
            "single_identity must be true or false"},
           {head + "      type: slurm\n" + ok + "      nice_per_priority: -1\n",
            "nice_per_priority must be from 0"},
           {head + "      type: slurm\n" + ok +
                "      priority_qos: [{max_priority: 50, qos: a}, {max_priority: 20, qos: b}]\n",
            ":8: resource_pools[0].resource_manager.priority_qos: max_priority must be from 1 to 99, "
            "growing"},
           {head + "      type: agent\n      partition: p\n", "a pool of agents takes only type"},
           {head + "      type: slurm\n" + ok + "    zero_slot_tasks: true\n",
            ":8: resource_pools[0].zero_slot_tasks: a Slurm pool runs no task of 0 slots"},
       }) {
    auto c = Load(yaml);
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_NE(c.status().message().find(expected), std::string::npos) << yaml << c.status().message();
  }
}

TEST_F(MasterConfigTest, TheTaskProxysSettings) {
  auto c = Load(
      "listen: 0.0.0.0:8080\nproxy:\n  listen: 0.0.0.0:8443\n  external_url: https://nb.example.com:8443/\n"
      "  idle_timeout_ms: 60000\n  max_connections_per_user: 8\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->proxy.listen, "0.0.0.0:8443");
  EXPECT_EQ(c->proxy.external_url, "https://nb.example.com:8443");  // no trailing '/'
  EXPECT_EQ(c->proxy.idle_timeout_ms, 60000);
  EXPECT_EQ(c->proxy.max_connections_per_user, 8);
  // By default: the main listener's host and a free port.
  auto d = Load("listen: 127.0.0.2:8080\n");
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->Finalize("ringmaster").ok());
  EXPECT_EQ(d->proxy.listen, "127.0.0.2:0");
  auto e = Load("proxy:\n  listen: 127.0.0.1:http\n");
  ASSERT_TRUE(e.ok());
  Status finalized = e->Finalize("ringmaster");
  EXPECT_NE(finalized.message().find("proxy.listen must be HOST:PORT with a port from 0 to 65535"),
            std::string::npos)
      << finalized.message();

  for (const auto& [yaml, expected] : std::vector<std::pair<std::string, std::string>>{
           {"proxy:\n  listen: nowhere\n", ":2: proxy.listen must be HOST:PORT"},
           {"proxy:\n  external_url: nb.example.com\n", ":2: proxy.external_url must start with http"},
           {"proxy:\n  idle_timeout_ms: 10\n", "proxy.idle_timeout_ms must be at least 1000"},
           {"proxy:\n  max_connections_per_user: 0\n", "proxy.max_connections_per_user must be from 1"},
           {"proxy:\n  port: 1\n", "unknown key \"proxy.port\""},
           {"proxy: 8081\n", "proxy must be a map"},
       }) {
    auto bad = Load(yaml);
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_NE(bad.status().message().find(expected), std::string::npos) << bad.status().message();
  }
}

TEST_F(MasterConfigTest, ShellsAndNotebooksIdleTimeouts) {
  auto c =
      Load("interactive:\n  idle_timeout: 30m\n  max_idle_timeout: 8h\n  notebook_look_interval_ms: 2000\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->interactive.idle.default_s, 1800);
  EXPECT_EQ(c->interactive.idle.max_s, 8 * 3600);
  EXPECT_EQ(c->interactive.notebook_look_interval_ms, 2000);
  auto none = Load("listen: 127.0.0.1:8080\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->interactive.idle.default_s) << "no idle timeout unless master.yaml sets one";
  EXPECT_FALSE(none->interactive.idle.max_s);
  for (const auto& [yaml, expected] : std::vector<std::pair<std::string, std::string>>{
           {"interactive:\n  idle_timeout: soon\n", ":2: interactive.idle_timeout must be a duration"},
           {"interactive:\n  max_idle_timeout: 0s\n", "interactive.max_idle_timeout must be a duration"},
           {"interactive:\n  idle_timeout: 2h\n  max_idle_timeout: 1h\n",
            "interactive.idle_timeout must not be longer than interactive.max_idle_timeout"},
           {"interactive:\n  notebook_look_interval_ms: 5\n", "notebook_look_interval_ms must be from 100"},
           {"interactive:\n  idle: 1h\n", "unknown key \"interactive.idle\""},
           {"interactive: 1h\n", "interactive must be a map"},
       }) {
    auto bad = Load(yaml);
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_NE(bad.status().message().find(expected), std::string::npos) << bad.status().message();
  }
}

TEST_F(MasterConfigTest, MistakesNameTheKeyAndLine) {
  struct Case {
    std::string yaml, expected;
  };
  for (const auto& [yaml, expected] : std::vector<Case>{
           {"resource_pools:\n  - name: a\n  - name: a\n", ":3: resource_pools[1].name \"a\" is taken"},
           {"resource_pools:\n  - name: a\n    scheduler: {type: fifo}\n",
            "scheduler.type must be priority or fair_share"},
           {"resource_pools:\n  - name: a\n    scheduler: {fitting_policy: tight}\n",
            "must be best or worst"},
           {"resource_pools:\n  - description: x\n", "resource_pools[0].name is required"},
           {"resource_pools:\n  - name: a\n    colour: red\n", "unknown key \"resource_pools[0].colour\""},
           {"resource_pools: []\n", "resource_pools must be a non-empty list"},
           {"resource_pools:\n  - name: a\n    launch: per_gpu\n",
            ":3: resource_pools[0].launch must be one of auto, per_slot, per_node, got \"per_gpu\""},
           {"reconnect_window_ms: soon\n", "reconnect_window_ms has the wrong type"},
           {"checkpoint_storage:\n  allowed_roots: [relative]\n",
            ":2: checkpoint_storage.allowed_roots must hold absolute folders, got \"relative\""},
           {"checkpoint_storage:\n  allowed_roots: [/a/../etc]\n", "must not contain \"..\""},
           {"checkpoint_storage:\n  roots: [/a]\n", "unknown key \"checkpoint_storage.roots\""},
       }) {
    auto c = Load(yaml);
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_NE(c.status().message().find(expected), std::string::npos) << c.status().message();
  }
}

}  // namespace
}  // namespace ring

namespace ring {
namespace {

TEST_F(MasterConfigTest, WebhooksSettingsParseAndMistakesNameTheKeyAndLine) {
  EXPECT_TRUE(MasterConfig{}.webhooks.allowed_urls.empty()) << "no webhook URL is allowed by default";
  auto c = Load(
      "webhooks:\n  allowed_urls:\n    - https://hooks.slack.com/services/\n    - \"*.example.com\"\n"
      "    - 10.0.0.0/8\n  timeout: 5s\n  retries: 2\n  retry_delay: 250ms\n  max_queued: 100\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->webhooks.allowed_urls.size(), 3u);
  EXPECT_EQ(c->webhooks.timeout, std::chrono::seconds(5));
  EXPECT_EQ(c->webhooks.retries, 2);
  EXPECT_EQ(c->webhooks.retry_delay, std::chrono::milliseconds(250));
  EXPECT_EQ(c->webhooks.max_queued, 100);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"webhooks:\n  allowed_urls:\n    - ftp://x/\n", ":3: webhooks.allowed_urls entry \"ftp://x/\""},
      {"webhooks:\n  allowed_urls: hooks.example.com\n", ":2: webhooks.allowed_urls must be a list"},
      {"webhooks:\n  retries: -1\n", ":2: webhooks.retries must be an integer from 0 to 20"},
      {"webhooks:\n  timeout: soon\n", ":2: webhooks.timeout must be a duration"},
      {"webhooks:\n  secret: x\n", ":2: unknown key \"webhooks.secret\""},
  };
  for (const auto& [text, want] : bad) {
    auto r = Load(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace ring
