// Agent channel messages: every type survives Encode -> Decode with every
// field, and malformed frames are refused with kInvalidArgument naming the
// field at fault.
#include "common/agent_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ring::proto {
namespace {

template <typename T>
T RoundTrip(const T& m) {
  const std::string text = Encode(m);
  auto decoded = Decode(text);
  EXPECT_TRUE(decoded.ok()) << text << ": " << decoded.status().message();
  if (!decoded.ok()) return T{};
  EXPECT_TRUE(std::holds_alternative<T>(*decoded)) << text;
  if (!std::holds_alternative<T>(*decoded)) return T{};
  EXPECT_EQ(Encode(*decoded), text);  // stable: a second trip changes nothing
  return std::get<T>(*decoded);
}

TEST(AgentProtocolTest, HelloRoundTrips) {
  Hello in{"agent-1",
           "gpus",
           "10.0.0.2",
           "0.3.1",
           {{0, "cuda", "GPU-aaaa"}, {1, "cuda", "GPU-bbbb"}, {2, "cpu", ""}},
           {{"7.0", 1, 4242}, {"8.1", 0, 99}},
           true};
  const Hello out = RoundTrip(in);
  EXPECT_TRUE(out.runs_as_owner);
  EXPECT_EQ(out.agent_id, "agent-1");
  EXPECT_EQ(out.pool, "gpus");
  EXPECT_EQ(out.address, "10.0.0.2");
  EXPECT_EQ(out.version, "0.3.1");
  ASSERT_EQ(out.slots.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out.slots[i].id, in.slots[i].id);
    EXPECT_EQ(out.slots[i].type, in.slots[i].type);
    EXPECT_EQ(out.slots[i].uuid, in.slots[i].uuid);
  }
  ASSERT_EQ(out.running.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out.running[i].allocation_id, in.running[i].allocation_id);
    EXPECT_EQ(out.running[i].rank, in.running[i].rank);
    EXPECT_EQ(out.running[i].pid, in.running[i].pid);
  }
  // A first connection has no processes; the pool defaults.
  auto bare = Decode(R"({"type":"hello","agent_id":"a","slots":[]})");
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_EQ(std::get<Hello>(*bare).pool, "default");
  EXPECT_TRUE(std::get<Hello>(*bare).running.empty());
  EXPECT_FALSE(std::get<Hello>(*bare).runs_as_owner);  // single-user mode unless it says so
}

TEST(AgentProtocolTest, WelcomeHeartbeatAndKillRoundTrip) {
  const Welcome w = RoundTrip(Welcome{250, 3000});
  EXPECT_EQ(w.heartbeat_interval_ms, 250);
  EXPECT_EQ(w.heartbeat_timeout_ms, 3000);
  auto hb = Decode(Encode(Heartbeat{}));
  ASSERT_TRUE(hb.ok());
  EXPECT_TRUE(std::holds_alternative<Heartbeat>(*hb));
  const Kill k = RoundTrip(Kill{"7.0", 500, "paused by alice"});
  EXPECT_EQ(k.allocation_id, "7.0");
  EXPECT_EQ(k.grace_ms, 500);
  EXPECT_EQ(k.reason, "paused by alice");
}

TEST(AgentProtocolTest, StartRoundTrips) {
  Start in;
  in.allocation_id = "7.0";
  in.allocation_token = "tok-\"quoted\"";
  in.trial_id = 7;
  in.experiment_id = 3;
  in.rank = 1;
  in.world_size = 4;
  in.local_rank = 1;
  in.local_world_size = 2;
  in.master_addr = "10.0.0.1";
  in.master_port = 29500;
  in.slot_ids = {2, 3};
  in.slot_type = "cuda";
  in.entrypoint = "python3 train.py --lr 0.1 && echo 'done'";
  in.hparams_json = R"({"lr":0.1,"layers":[64,64]})";
  in.latest_checkpoint = "/ckpt/0a1b";
  in.environment = {{"A", "1"}, {"MULTI", "line\nbreak"}};
  in.model_definition_path = "/api/v1/allocations/7.0/model_definition";
  const Start out = RoundTrip(in);
  EXPECT_EQ(out.allocation_id, in.allocation_id);
  EXPECT_EQ(out.allocation_token, in.allocation_token);
  EXPECT_EQ(out.trial_id, 7);
  EXPECT_EQ(out.experiment_id, 3);
  EXPECT_EQ(out.rank, 1);
  EXPECT_EQ(out.world_size, 4);
  EXPECT_EQ(out.local_rank, 1);
  EXPECT_EQ(out.local_world_size, 2);
  EXPECT_EQ(out.master_addr, in.master_addr);
  EXPECT_EQ(out.master_port, 29500);
  EXPECT_EQ(out.slot_ids, in.slot_ids);
  EXPECT_EQ(out.slot_type, "cuda");
  EXPECT_EQ(out.entrypoint, in.entrypoint);
  EXPECT_EQ(out.hparams_json, in.hparams_json);
  EXPECT_EQ(out.latest_checkpoint, in.latest_checkpoint);
  EXPECT_EQ(out.environment, in.environment);
  EXPECT_EQ(out.model_definition_path, in.model_definition_path);
  EXPECT_FALSE(out.run_as.has_value());

  in.owner = "alice";
  in.run_as = RunAs{1001, 1002, "alice", "team"};
  const Start linked = RoundTrip(in);
  EXPECT_EQ(linked.owner, "alice");
  ASSERT_TRUE(linked.run_as.has_value());
  EXPECT_EQ(linked.run_as->uid, 1001);
  EXPECT_EQ(linked.run_as->gid, 1002);
  EXPECT_EQ(linked.run_as->user, "alice");
  EXPECT_EQ(linked.run_as->group, "team");

  // A uid that no account can have is refused, naming the field.
  std::string bad = Encode(in);
  bad.replace(bad.find("1001"), 4, "-5");
  auto refused = Decode(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("run_as"), std::string::npos);
}

TEST(AgentProtocolTest, StateChangeCarriesExitCodeOrSignal) {
  for (ProcessState s : {ProcessState::kStarting, ProcessState::kRunning}) {
    const StateChange out = RoundTrip(StateChange{"7.0", 2, s, std::nullopt, std::nullopt, ""});
    EXPECT_EQ(out.state, s);
    EXPECT_EQ(out.rank, 2);
    EXPECT_FALSE(out.exit_code.has_value());
    EXPECT_FALSE(out.signal.has_value());
  }
  const StateChange exited = RoundTrip(StateChange{"7.0", 1, ProcessState::kExited, 3, std::nullopt, "boom"});
  EXPECT_EQ(exited.allocation_id, "7.0");
  EXPECT_EQ(exited.state, ProcessState::kExited);
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_FALSE(exited.signal.has_value());
  EXPECT_EQ(exited.message, "boom");
  const StateChange zero = RoundTrip(StateChange{"7.0", 0, ProcessState::kExited, 0, std::nullopt, ""});
  EXPECT_EQ(zero.exit_code, 0);  // 0 is a value, not "absent"
  const StateChange killed = RoundTrip(StateChange{"7.0", 0, ProcessState::kExited, std::nullopt, 9, ""});
  EXPECT_EQ(killed.signal, 9);
  EXPECT_FALSE(killed.exit_code.has_value());
  EXPECT_EQ(ToString(ProcessState::kStarting), "starting");
  EXPECT_EQ(ToString(ProcessState::kRunning), "running");
  EXPECT_EQ(ToString(ProcessState::kExited), "exited");
}

// A job agent's messages (ringagent --slurm-allocation): Slurm is stopping
// its job, and exits it stopped with itself.
TEST(AgentProtocolTest, StoppingAndAgentStoppingExitsRoundTrip) {
  auto stopping = Decode(Encode(Stopping{"7.0", "SIGTERM from Slurm"}));
  ASSERT_TRUE(stopping.ok()) << stopping.status().message();
  const auto* s = std::get_if<Stopping>(&*stopping);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->allocation_id, "7.0");
  EXPECT_EQ(s->reason, "SIGTERM from Slurm");
  EXPECT_FALSE(Decode(R"({"type":"stopping"})").ok());

  StateChange exited{"7.0", 1, ProcessState::kExited, std::nullopt, 15, ""};
  exited.agent_stopping = true;
  auto decoded = Decode(Encode(exited));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(std::get<StateChange>(*decoded).agent_stopping);
  EXPECT_EQ(Encode(StateChange{"7.0", 1, ProcessState::kExited, 0, std::nullopt, ""}).find("agent_stopping"),
            std::string::npos);  // absent unless set: older masters read the same frames
}

TEST(AgentProtocolTest, LogBatchRoundTrips) {
  const LogBatch out = RoundTrip(LogBatch{
      "7.0",
      3,
      12,
      {{1700000000123, "stdout", "epoch 1 loss=0.5"}, {1700000000456, "stderr", "warn: \"x\"\t", 5}}});
  EXPECT_EQ(out.allocation_id, "7.0");
  EXPECT_EQ(out.rank, 3);
  EXPECT_EQ(out.seq, 12);
  ASSERT_EQ(out.lines.size(), 2u);
  EXPECT_EQ(out.lines[0].ts_ms, 1700000000123);
  EXPECT_EQ(out.lines[0].stream, "stdout");
  EXPECT_EQ(out.lines[0].line, "epoch 1 loss=0.5");
  EXPECT_EQ(out.lines[1].stream, "stderr");
  EXPECT_EQ(out.lines[1].line, "warn: \"x\"\t");
  EXPECT_EQ(out.lines[0].rank, std::nullopt) << "a line without a rank of its own is the batch's";
  EXPECT_EQ(out.lines[1].rank, 5);
  // Bytes that are not UTF-8 do not break the frame; they are replaced.
  auto bad = Decode(Encode(LogBatch{"7.0", 0, 1, {{1, "stdout", "ok \xff end"}}}));
  ASSERT_TRUE(bad.ok()) << bad.status().message();
  const auto& line = std::get<LogBatch>(*bad).lines.at(0).line;
  EXPECT_EQ(line.rfind("ok ", 0), 0u);
  EXPECT_NE(line.find(" end"), std::string::npos);
}

TEST(AgentProtocolTest, MalformedFramesNameTheField) {
  const std::string state = R"("type":"state","allocation_id":"1.0","rank":0)";
  const std::string log = R"("type":"log","allocation_id":"1.0","rank":0)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not a JSON object"},
      {"{\"type\":", "not a JSON object"},
      {"[1,2]", "not a JSON object"},
      {"\"hello\"", "not a JSON object"},
      {"42", "not a JSON object"},
      {"{}", "\"type\""},
      {R"({"type":null})", "\"type\""},
      {R"({"type":7})", "field \"type\" has the wrong type"},
      {R"({"type":"teleport"})", "unknown message type \"teleport\""},
      {R"({"type":"hello","slots":[]})", "\"agent_id\""},
      {R"({"type":"hello","agent_id":7,"slots":[]})", "\"agent_id\""},
      {R"({"type":"hello","agent_id":"a"})", "\"slots\""},
      {R"({"type":"hello","agent_id":"a","slots":{}})", "\"slots\""},
      {R"({"type":"hello","agent_id":"a","slots":[{"type":"cpu"}]})", "missing field \"id\""},
      {R"({"type":"hello","agent_id":"a","slots":[{"id":"zero","type":"cpu"}]})",
       "field \"id\" has the wrong type"},
      {R"({"type":"hello","agent_id":"a","slots":[{"id":0}]})", "missing field \"type\""},
      {R"({"type":"hello","agent_id":"a","slots":[],"running":[{"rank":0}]})", "\"allocation_id\""},
      {R"({"type":"welcome","heartbeat_interval_ms":"1s","heartbeat_timeout_ms":5})",
       "\"heartbeat_interval_ms\""},
      {R"({"type":"welcome","heartbeat_interval_ms":100})", "missing field \"heartbeat_timeout_ms\""},
      {R"({"type":"start","allocation_id":"1.0"})", "missing field \"allocation_token\""},
      {R"({"type":"start","allocation_id":"1.0","allocation_token":"t","trial_id":1,"experiment_id":1,)"
       R"("rank":0,"world_size":1,"local_rank":0,"local_world_size":1,"slot_ids":[0],"slot_type":"cpu",)"
       R"("entrypoint":"x","model_definition_path":"/m","environment":{"A":1}})",
       "field \"environment\" has the wrong type"},
      {R"({"type":"start","allocation_id":"1.0","allocation_token":"t","trial_id":1,"experiment_id":1,)"
       R"("rank":0,"world_size":1,"local_rank":0,"local_world_size":1,"slot_ids":["0"],"slot_type":"cpu",)"
       R"("entrypoint":"x","model_definition_path":"/m"})",
       "field \"slot_ids\" has the wrong type"},
      {R"({"type":"kill"})", "\"allocation_id\""},
      {R"({"type":"kill","allocation_id":"1.0","grace_ms":"soon"})", "\"grace_ms\""},
      {"{" + state + "}", "\"state\""},
      {"{" + state + R"(,"state":"flying"})", "field \"state\" must be starting, running or exited"},
      {"{" + state + R"(,"state":"EXITED"})", "\"state\""},
      {"{" + state + R"(,"state":3})", "\"state\""},
      {"{" + state + R"(,"state":"exited","exit_code":"3"})", "field \"exit_code\" has the wrong type"},
      {"{" + state + R"(,"state":"exited","signal":[9]})", "\"signal\""},
      {R"({"type":"state","allocation_id":"1.0","state":"running"})", "\"rank\""},
      {"{" + log + "}", "\"lines\""},
      {"{" + log + R"(,"lines":"x"})", "\"lines\""},
      {"{" + log + R"(,"lines":{"line":"x"}})", "\"lines\""},
      {"{" + log + R"(,"lines":[{"stream":"stdout"}]})", "missing field \"line\""},
      {"{" + log + R"(,"lines":[{"line":5}]})", "\"line\""},
      // Found by fuzz/fuzz_agent_protocol: numbers that do not fit the field
      // were cast (undefined behaviour) instead of refused.
      {R"({"type":"state","allocation_id":"1.0","rank":1e300,"state":"running"})",
       "field \"rank\" has the wrong type"},
      {R"({"type":"state","allocation_id":"1.0","rank":2147483648,"state":"running"})",
       "field \"rank\" has the wrong type"},
      {R"({"type":"state","allocation_id":"1.0","rank":0.5,"state":"running"})",
       "field \"rank\" has the wrong type"},
      {"{" + log + R"(,"seq":18446744073709551615,"lines":[]})", "field \"seq\" has the wrong type"},
      {"{" + log + R"(,"lines":[{"ts_ms":-1e30,"line":"x"}]})", "field \"ts_ms\" has the wrong type"},
      {R"({"type":"hello","agent_id":"a","slots":[{"id":4e9,"type":"cpu"}]})",
       "field \"id\" has the wrong type"},
      {R"({"type":"start","allocation_id":"1.0","allocation_token":"t","trial_id":1,"experiment_id":1,)"
       R"("rank":0,"world_size":2666666666666666666666666666666666,"local_rank":0,"local_world_size":1,)"
       R"("slot_ids":[0],"slot_type":"cpu","entrypoint":"x","model_definition_path":"/m"})",
       "field \"world_size\" has the wrong type"},
      {R"({"type":"start","allocation_id":"1.0","allocation_token":"t","trial_id":1,"experiment_id":1,)"
       R"("rank":0,"world_size":1,"local_rank":0,"local_world_size":1,"slot_ids":[0,1e12],"slot_type":"cpu",)"
       R"("entrypoint":"x","model_definition_path":"/m"})",
       "field \"slot_ids\" has the wrong type"},
  };
  for (const auto& [frame, needle] : cases) {
    auto m = Decode(frame);
    ASSERT_FALSE(m.ok()) << frame;
    EXPECT_EQ(m.status().code(), ErrorCode::kInvalidArgument) << frame;
    EXPECT_NE(m.status().message().find(needle), std::string::npos)
        << frame << " gave: " << m.status().message() << ", expected it to name " << needle;
  }
}

TEST(AgentProtocolTest, FramesAreTypedJsonObjects) {
  const auto frame = nlohmann::json::parse(Encode(Kill{"9.1", 250, "preempted"}));
  EXPECT_EQ(frame["type"], "kill");
  EXPECT_EQ(frame["allocation_id"], "9.1");
  EXPECT_EQ(frame["grace_ms"], 250);
  const auto state =
      nlohmann::json::parse(Encode(StateChange{"9.1", 0, ProcessState::kExited, 1, std::nullopt, ""}));
  EXPECT_EQ(state["state"], "exited");
  EXPECT_EQ(state["exit_code"], 1);
  EXPECT_FALSE(state.contains("signal"));  // absent, not null or 0
  // Fields a newer peer adds are ignored.
  EXPECT_TRUE(Decode(R"({"type":"heartbeat","load":0.5})").ok());
}

}  // namespace
}  // namespace ring::proto

namespace ring::proto {
namespace agent_protocol_containers {

TEST(AgentProtocolContainersTest, HelloCarriesContainerRuntimes) {
  Hello in;
  in.agent_id = "a";
  in.container_runtimes = {{"podman", "4.3.1", false}, {"docker", "28.2.2", true}};
  auto decoded = Decode(Encode(in));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const auto& out = std::get<Hello>(*decoded).container_runtimes;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "podman");
  EXPECT_EQ(out[0].version, "4.3.1");
  EXPECT_FALSE(out[0].rootless);
  EXPECT_TRUE(out[1].rootless);
  // An older agent's hello has no field: no runtime.
  auto old = Decode(R"({"type":"hello","agent_id":"a","slots":[]})");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(std::get<Hello>(*old).container_runtimes.empty());
}

TEST(AgentProtocolContainersTest, StartCarriesItsContainer) {
  Start in;
  in.allocation_id = "3.1";
  in.slot_type = "cpu";
  in.entrypoint = "./run.sh";
  in.model_definition_path = "/m";
  Container c;
  c.image = "localhost/quadratic:1";
  c.runtime = "podman";
  c.force_pull = true;
  c.registry_auth = {{"username", "alice"}, {"password", "pw"}};
  c.checkpoint_path = "/srv/ckpt";
  c.mounts = {{"/srv/data", "/data", true, "rslave"}};
  in.container = c;
  auto decoded = Decode(Encode(in));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  const auto& out = std::get<Start>(*decoded).container;
  ASSERT_TRUE(out);
  EXPECT_EQ(out->image, "localhost/quadratic:1");
  EXPECT_EQ(out->runtime, "podman");
  EXPECT_TRUE(out->force_pull);
  EXPECT_EQ(out->registry_auth.at("password"), "pw");
  EXPECT_EQ(out->checkpoint_path, "/srv/ckpt");
  ASSERT_EQ(out->mounts.size(), 1u);
  EXPECT_EQ(out->mounts[0].container_path, "/data");
  EXPECT_TRUE(out->mounts[0].read_only);
  EXPECT_EQ(out->mounts[0].propagation, "rslave");
  // No container: the rank runs on the host; an empty image is refused.
  in.container.reset();
  EXPECT_FALSE(std::get<Start>(*Decode(Encode(in))).container);
  auto empty = Decode(R"({"type":"start","allocation_id":"a","allocation_token":"t","trial_id":1,)"
                      R"("experiment_id":1,"rank":0,"world_size":1,"local_rank":0,"local_world_size":1,)"
                      R"("slot_ids":[0],"slot_type":"cpu","entrypoint":"x","model_definition_path":"/m",)"
                      R"("container":{"image":""}})");
  EXPECT_FALSE(empty.ok());
}

}  // namespace agent_protocol_containers
}  // namespace ring::proto
