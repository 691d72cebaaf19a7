// Pure parts of the agent: trial environment, slots, GPU detection, line
// splitting, log batching, the outbound queue and the configuration.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "agent/agent_config.h"
#include "agent/gpu_detector.h"
#include "agent/line_splitter.h"
#include "agent/log_batcher.h"
#include "agent/outbound_queue.h"
#include "agent/trial_environment.h"

namespace ring {
namespace {

using namespace std::chrono_literals;

proto::Start MakeStart() {
  proto::Start s;
  s.allocation_id = "a-7";
  s.allocation_token = "tok";
  s.trial_id = 12;
  s.experiment_id = 3;
  s.rank = 2;
  s.world_size = 4;
  s.local_rank = 1;
  s.local_world_size = 2;
  s.master_addr = "10.0.0.5";
  s.master_port = 29500;
  s.slot_ids = {1, 2};
  s.slot_type = "cuda";
  s.entrypoint = "python3 train.py";
  s.hparams_json = R"({"lr":0.1})";
  s.latest_checkpoint = "/ckpt/abc";
  s.environment = {{"RING_MAX_LENGTH_BATCHES", "500"}, {"OMP_NUM_THREADS", "1"}};
  return s;
}

const AgentIdentity kAgent{"gpu-host-3", "10.0.0.7"};

std::vector<proto::Slot> GpuSlots() {
  return {{0, "cuda", "GPU-aaa"}, {1, "cuda", "GPU-bbb"}, {2, "cuda", ""}, {3, "cpu", ""}};
}

TEST(AgentEnvironment, SetsEveryContractVariable) {
  Environment env =
      BuildTrialEnvironment(MakeStart(), "http://m:8080", kAgent, GpuSlots(), {{"PATH", "/bin"}});
  EXPECT_EQ(env["PATH"], "/bin");
  EXPECT_EQ(env["RING_MASTER_URL"], "http://m:8080");
  EXPECT_EQ(env["RING_ALLOCATION_ID"], "a-7");
  EXPECT_EQ(env["RING_ALLOCATION_TOKEN"], "tok");
  EXPECT_EQ(env["RING_TRIAL_ID"], "12");
  EXPECT_EQ(env["RING_EXPERIMENT_ID"], "3");
  EXPECT_EQ(env["RING_HPARAMS"], R"({"lr":0.1})");
  EXPECT_EQ(env["RING_LATEST_CHECKPOINT"], "/ckpt/abc");
  EXPECT_EQ(env["RANK"], "2");
  EXPECT_EQ(env["WORLD_SIZE"], "4");
  EXPECT_EQ(env["LOCAL_RANK"], "1");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "2");
  EXPECT_EQ(env["MASTER_ADDR"], "10.0.0.5");
  EXPECT_EQ(env["MASTER_PORT"], "29500");
  EXPECT_EQ(env["RING_AGENT_ID"], "gpu-host-3");
  EXPECT_EQ(env["RING_AGENT_ADDR"], "10.0.0.7");
  EXPECT_EQ(env["RING_MAX_LENGTH_BATCHES"], "500");
  EXPECT_EQ(env["OMP_NUM_THREADS"], "1");
}

TEST(AgentEnvironment, PerSlotLaunchDescribesThisRanksNode) {
  proto::Start start = MakeStart();
  start.node_rank = 1;
  start.node_addrs = {"10.0.0.5", "10.0.0.7"};
  Environment env = BuildTrialEnvironment(start, "http://m:8080", kAgent, GpuSlots(), {});
  EXPECT_EQ(env["RANK"], "2");
  EXPECT_EQ(env["LOCAL_RANK"], "1");
  EXPECT_EQ(env["RING_SLOT_IDS"], "1,2");
  EXPECT_EQ(env["RING_CONTAINER_ADDRS"], "10.0.0.5,10.0.0.7");
  EXPECT_EQ(env["RING_CONTAINER_RANK"], "1");
  EXPECT_EQ(env["RING_LAUNCH"], "per_slot");
  EXPECT_EQ(env.count("NODE_RANK"), 0u);
}

TEST(AgentEnvironment, PerNodeLaunchSetsTheLauncherVariables) {
  // The second of two agents, 4 slots each: one process for its 4 slots.
  proto::Start start = MakeStart();
  start.per_node = true;
  start.rank = 1;
  start.node_rank = 1;
  start.world_size = 8;
  start.local_rank = 0;
  start.local_world_size = 4;
  start.slot_type = "cpu";
  start.slot_ids = {4, 5, 6, 7};
  start.node_addrs = {"10.0.0.5", "10.0.0.7"};
  start.node_slot_counts = {3, 4};
  Environment env = BuildTrialEnvironment(start, "http://m:8080", kAgent, {},
                                          {{"RANK", "3"}, {"LOCAL_RANK", "2"}, {"PATH", "/bin"}});
  EXPECT_EQ(env["MASTER_ADDR"], "10.0.0.5");
  EXPECT_EQ(env["MASTER_PORT"], "29500");
  EXPECT_EQ(env["WORLD_SIZE"], "8");
  EXPECT_EQ(env["NODE_RANK"], "1");
  EXPECT_EQ(env["GROUP_RANK"], "1");
  EXPECT_EQ(env["NNODES"], "2");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "4");
  EXPECT_EQ(env["RING_SLOT_IDS"], "4,5,6,7");
  EXPECT_EQ(env["RING_CONTAINER_ADDRS"], "10.0.0.5,10.0.0.7");
  EXPECT_EQ(env["RING_CONTAINER_RANK"], "1");
  EXPECT_EQ(env["RING_CONTAINER_SLOT_COUNTS"], "3,4");
  EXPECT_EQ(env["RING_LAUNCH"], "per_node");
  // The launcher gives its workers RANK and LOCAL_RANK; none leaks in.
  EXPECT_EQ(env.count("RANK"), 0u);
  EXPECT_EQ(env.count("LOCAL_RANK"), 0u);
}

TEST(AgentEnvironment, StartMessagesCarryTheLaunchFields) {
  proto::Start start = MakeStart();
  start.per_node = true;
  start.node_rank = 1;
  start.node_addrs = {"a", "b"};
  auto decoded = proto::Decode(proto::Encode(start));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const auto& back = std::get<proto::Start>(*decoded);
  EXPECT_TRUE(back.per_node);
  EXPECT_EQ(back.node_rank, 1);
  EXPECT_EQ(back.node_addrs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(back.slot_ids, start.slot_ids);
}

TEST(AgentEnvironment, CudaSlotsListUuidsOrIdsWithoutUuid) {
  Environment env = BuildTrialEnvironment(MakeStart(), "http://m:8080", kAgent, GpuSlots(), {});
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "GPU-bbb,2");
}

TEST(AgentEnvironment, CpuSlotsHideEveryGpu) {
  proto::Start start = MakeStart();
  start.slot_type = "cpu";
  start.slot_ids = {3};
  Environment env =
      BuildTrialEnvironment(start, "http://m:8080", kAgent, GpuSlots(), {{"CUDA_VISIBLE_DEVICES", "0"}});
  ASSERT_TRUE(env.count("CUDA_VISIBLE_DEVICES"));
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "");
}

TEST(AgentEnvironment, NoCheckpointMeansNoVariableEvenIfInherited) {
  proto::Start start = MakeStart();
  start.latest_checkpoint.clear();
  start.hparams_json.clear();
  Environment env =
      BuildTrialEnvironment(start, "http://m:8080", kAgent, {}, {{"RING_LATEST_CHECKPOINT", "/stale"}});
  EXPECT_EQ(env.count("RING_LATEST_CHECKPOINT"), 0u);
  EXPECT_EQ(env["RING_HPARAMS"], "{}");
}

TEST(AgentEnvironment, ManagedVariablesWinOverExperimentAndAgentEnvironment) {
  proto::Start start = MakeStart();
  start.environment["RANK"] = "99";
  start.environment["RING_ALLOCATION_TOKEN"] = "stolen";
  start.environment["PATH"] = "/custom";
  start.environment["RING_AGENT_ID"] = "other-host";
  Environment env =
      BuildTrialEnvironment(start, "http://m:8080", kAgent, {},
                            {{"PATH", "/bin"}, {"WORLD_SIZE", "7"}, {"RING_AGENT_ADDR", "1.2.3.4"}});
  EXPECT_EQ(env["RANK"], "2");
  EXPECT_EQ(env["RING_AGENT_ID"], "gpu-host-3");
  EXPECT_EQ(env["RING_AGENT_ADDR"], "10.0.0.7");
  EXPECT_EQ(env["WORLD_SIZE"], "4");
  EXPECT_EQ(env["RING_ALLOCATION_TOKEN"], "tok");
  EXPECT_EQ(env["PATH"], "/custom");  // experiment variables override the inherited ones
}

TEST(AgentEnvironment, EnvpIsNameEqualsValue) {
  auto envp = ToEnvp({{"A", "1"}, {"B", "x=y"}});
  EXPECT_EQ(envp, (std::vector<std::string>{"A=1", "B=x=y"}));
}

TEST(AgentSlots, CpuCountWhenNoGpuAndNoFlag) {
  auto slots = BuildSlots({}, 0, 3);
  ASSERT_EQ(slots.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(slots[i].id, i);
    EXPECT_EQ(slots[i].type, "cpu");
  }
  EXPECT_EQ(BuildSlots({}, 0, 0).size(), 1u);
}

TEST(AgentSlots, ExplicitCpuSlots) {
  auto slots = BuildSlots({}, 2, 16);
  ASSERT_EQ(slots.size(), 2u);
}

TEST(AgentSlots, GpusFirstThenRequestedCpuSlots) {
  std::vector<proto::Slot> gpus = {{0, "cuda", "GPU-a"}, {1, "cuda", "GPU-b"}};
  auto only_gpus = BuildSlots(gpus, 0, 16);
  ASSERT_EQ(only_gpus.size(), 2u);
  EXPECT_EQ(only_gpus[1].uuid, "GPU-b");
  auto mixed = BuildSlots(gpus, 1, 16);
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_EQ(mixed[2].id, 2);
  EXPECT_EQ(mixed[2].type, "cpu");
}

TEST(AgentGpuDetector, NoLibraryMeansNoSlots) {
  EXPECT_TRUE(DetectGpus("libnvidia-ml.so.1").empty());  // no driver on test hosts
  EXPECT_TRUE(DetectGpus("/nonexistent/libnvidia-ml.so.1").empty());
  EXPECT_TRUE(DetectGpus("libc.so.6").empty());  // loads, but has no NVML functions
}

TEST(AgentGpuDetector, ReadsDevicesThroughNvml) {
  auto slots = DetectGpus(RING_FAKE_NVML_PATH);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].id, 0);
  EXPECT_EQ(slots[0].type, "cuda");
  EXPECT_EQ(slots[0].uuid, "GPU-fake-0");
  EXPECT_EQ(slots[1].uuid, "GPU-fake-1");
}

TEST(AgentLineSplitter, SplitsAcrossFeedsAndKeepsEmptyLines) {
  LineSplitter s;
  EXPECT_EQ(s.Feed("ab"), std::vector<std::string>{});
  EXPECT_EQ(s.Feed("c\n\nd\ne"), (std::vector<std::string>{"abc", "", "d"}));
  EXPECT_EQ(s.Finish(), std::vector<std::string>{"e"});
  EXPECT_EQ(s.Finish(), std::vector<std::string>{});
}

TEST(AgentLineSplitter, LongLinesAreCutAtTheLimit) {
  LineSplitter s(4);
  EXPECT_EQ(s.Feed("abcdefghij\n"), (std::vector<std::string>{"abcd", "efgh", "ij"}));
  // Exactly the limit followed by a newline is one line, even across feeds.
  EXPECT_EQ(s.Feed("wxyz"), std::vector<std::string>{});
  EXPECT_EQ(s.Feed("\n"), std::vector<std::string>{"wxyz"});
  EXPECT_EQ(LineSplitter().Feed(std::string(70000, 'x') + "\n").size(), 2u);
}

proto::LogLine Line(const std::string& text) {
  return proto::LogLine{1, "stdout", text};
}

TEST(AgentLogBatcher, FlushesAtOneHundredLines) {
  LogBatcher b("a1", 3);
  auto t0 = LogBatcher::Clock::now();
  for (int i = 0; i < 99; ++i) EXPECT_FALSE(b.Add(Line(std::to_string(i)), t0).has_value());
  auto batch = b.Add(Line("99"), t0);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->lines.size(), 100u);
  EXPECT_EQ(batch->allocation_id, "a1");
  EXPECT_EQ(batch->rank, 3);
  EXPECT_EQ(batch->seq, 0);
  EXPECT_EQ(batch->lines.front().line, "0");
  EXPECT_EQ(batch->lines.back().line, "99");
  EXPECT_TRUE(b.empty());
}

TEST(AgentLogBatcher, FlushesTwoHundredMillisecondsAfterTheOldestLine) {
  LogBatcher b("a1", 0);
  auto t0 = LogBatcher::Clock::now();
  EXPECT_FALSE(b.TakeIfDue(t0 + 1s).has_value());  // nothing buffered
  (void)b.Add(Line("x"), t0);
  (void)b.Add(Line("y"), t0 + 150ms);
  EXPECT_EQ(b.due(), t0 + 200ms);
  EXPECT_FALSE(b.TakeIfDue(t0 + 199ms).has_value());
  auto batch = b.TakeIfDue(t0 + 200ms);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->lines.size(), 2u);
}

TEST(AgentLogBatcher, FlushesOnBytesAndNumbersBatches) {
  LogBatcher b("a1", 0);
  auto now = LogBatcher::Clock::now();
  std::string big(LogBatcher::kMaxBytes / 2, 'x');
  EXPECT_FALSE(b.Add(Line(big), now).has_value());
  auto first = b.Add(Line(big), now);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->lines.size(), 2u);
  (void)b.Add(Line("tail"), now);
  auto second = b.Flush();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->seq, 1);
  EXPECT_FALSE(b.Flush().has_value());
  EXPECT_EQ(b.next_seq(), 2);
}

proto::StateChange State(const std::string& id) {
  proto::StateChange s;
  s.allocation_id = id;
  return s;
}

proto::LogBatch Batch(int64_t seq, size_t bytes) {
  proto::LogBatch b;
  b.allocation_id = "a";
  b.seq = seq;
  b.lines.push_back(Line(std::string(bytes, 'x')));
  return b;
}

int64_t SeqOf(const std::string& frame) {
  auto m = proto::Decode(frame);
  return std::get<proto::LogBatch>(*m).seq;
}

TEST(AgentOutboundQueue, DropsOldestLogBatchesButNeverStates) {
  OutboundQueue q(/*max_log_bytes=*/1 << 20, /*max_log_batches=*/2);
  q.Push(Batch(0, 10));
  q.Push(State("s1"));
  q.Push(Batch(1, 10));
  q.Push(Batch(2, 10));  // over the count: batch 0 goes
  q.Push(State("s2"));
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.dropped_batches(), 1u);
  EXPECT_EQ(q.dropped_lines(), 1u);
  std::vector<std::string> kinds;
  while (!q.empty()) {
    std::string frame = q.BeginFront();
    auto m = proto::Decode(frame);
    ASSERT_TRUE(m.ok());
    if (auto* s = std::get_if<proto::StateChange>(&*m)) kinds.push_back(s->allocation_id);
    if (auto* l = std::get_if<proto::LogBatch>(&*m)) kinds.push_back("log" + std::to_string(l->seq));
    q.EndFront(true);
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"s1", "log1", "log2", "s2"}));
  EXPECT_EQ(q.log_bytes(), 0u);
}

TEST(AgentOutboundQueue, ByteBoundAndInFlightFront) {
  OutboundQueue q(/*max_log_bytes=*/3000, /*max_log_batches=*/100);
  q.Push(Batch(0, 1000));
  std::string front = q.BeginFront();  // being written: must survive
  q.Push(Batch(1, 1000));
  q.Push(Batch(2, 1000));  // over the bytes: batch 1 goes, not the in-flight 0
  EXPECT_EQ(q.dropped_batches(), 1u);
  q.EndFront(false);  // the write failed: kept for the next connection
  EXPECT_EQ(SeqOf(q.BeginFront()), 0);
  q.EndFront(true);
  EXPECT_EQ(SeqOf(q.BeginFront()), 2);
  q.EndFront(true);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.log_batches(), 0u);
}

TEST(AgentOutboundQueue, StatesAloneAreNeverDropped) {
  OutboundQueue q(/*max_log_bytes=*/10, /*max_log_batches=*/1);
  for (int i = 0; i < 50; ++i) q.Push(State("s" + std::to_string(i)));
  EXPECT_EQ(q.size(), 50u);
  EXPECT_EQ(q.dropped_batches(), 0u);
}

TEST(AgentConfig, DefaultsAndValidation) {
  AgentConfig c;
  c.master_url = "http://127.0.0.1:8080/";
  ASSERT_TRUE(ResolveAgentConfig(c).ok());
  EXPECT_FALSE(c.id.empty());
  EXPECT_EQ(c.work_dir, DefaultWorkDir());
  EXPECT_NE(c.work_dir.rfind("/tmp/", 0), 0u) << c.work_dir;
  EXPECT_EQ(c.master_url, "http://127.0.0.1:8080");

  AgentConfig ws;
  ws.master_url = "ws://m:1";
  ws.id = "n1";
  ASSERT_TRUE(ResolveAgentConfig(ws).ok());
  EXPECT_EQ(ws.master_url, "http://m:1");

  AgentConfig relative;
  relative.master_url = "http://m:1";
  relative.id = "n1";
  relative.work_dir = "work/./agents/";
  ASSERT_TRUE(ResolveAgentConfig(relative).ok());
  EXPECT_EQ(relative.work_dir, (std::filesystem::current_path() / "work/agents").string());

  AgentConfig missing;
  auto s = ResolveAgentConfig(missing);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--master"), std::string::npos);

  AgentConfig bad_id;
  bad_id.master_url = "http://m:1";
  bad_id.id = "../etc";
  EXPECT_NE(ResolveAgentConfig(bad_id).message().find("--id"), std::string::npos);

  AgentConfig bad_slots;
  bad_slots.master_url = "http://m:1";
  bad_slots.cpu_slots = -1;
  EXPECT_NE(ResolveAgentConfig(bad_slots).message().find("--cpu-slots"), std::string::npos);

  AgentConfig bad_level;
  bad_level.master_url = "http://m:1";
  bad_level.log_level = "loud";
  EXPECT_NE(ResolveAgentConfig(bad_level).message().find("--log-level"), std::string::npos);
}

}  // namespace
}  // namespace ring
