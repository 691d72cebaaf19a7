#include "common/agent_protocol.h"

#include <gtest/gtest.h>

namespace ring::proto {
namespace {

template <typename T>
T RoundTrip(const T& m) {
  auto decoded = Decode(Encode(m));
  EXPECT_TRUE(decoded.ok()) << decoded.status().message();
  return std::get<T>(*decoded);
}

TEST(AgentProtocolTest, EveryMessageRoundTrips) {
  auto hello = RoundTrip(Hello{
      "a1", "gpus", "10.0.0.2", "0.1", {{0, "cuda", "GPU-1"}, {1, "cuda", "GPU-2"}}, {{"7.0", 1, 4242}}});
  EXPECT_EQ(hello.agent_id, "a1");
  EXPECT_EQ(hello.slots[1].uuid, "GPU-2");
  EXPECT_EQ(hello.running[0].pid, 4242);
  EXPECT_EQ(RoundTrip(Welcome{250, 3000}).heartbeat_timeout_ms, 3000);
  Start start;
  start.allocation_id = "7.0";
  start.allocation_token = "tok";
  start.trial_id = 7;
  start.experiment_id = 3;
  start.rank = 1;
  start.world_size = 4;
  start.local_rank = 1;
  start.local_world_size = 2;
  start.master_addr = "10.0.0.1";
  start.master_port = 29500;
  start.slot_ids = {2, 3};
  start.slot_type = "cuda";
  start.entrypoint = "python3 train.py";
  start.hparams_json = "{\"lr\":0.1}";
  start.latest_checkpoint = "/ckpt/u";
  start.environment = {{"A", "1"}};
  start.model_definition_path = "/api/v1/allocations/7.0/model_definition";
  auto s = RoundTrip(start);
  EXPECT_EQ(s.slot_ids, start.slot_ids);
  EXPECT_EQ(s.environment, start.environment);
  EXPECT_EQ(s.hparams_json, start.hparams_json);
  EXPECT_EQ(s.latest_checkpoint, "/ckpt/u");
  EXPECT_EQ(RoundTrip(Kill{"7.0", 500, "paused"}).reason, "paused");
  auto exited = RoundTrip(StateChange{"7.0", 1, ProcessState::kExited, 3, std::nullopt, "boom"});
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_FALSE(exited.signal.has_value());
  auto signalled = RoundTrip(StateChange{"7.0", 0, ProcessState::kExited, std::nullopt, 9, ""});
  EXPECT_EQ(signalled.signal, 9);
  EXPECT_FALSE(signalled.exit_code.has_value());
  auto logs = RoundTrip(LogBatch{"7.0", 0, 5, {{1, "stdout", "hello"}, {2, "stderr", "\xff bad utf8"}}});
  EXPECT_EQ(logs.seq, 5);
  EXPECT_EQ(logs.lines[0].line, "hello");
  EXPECT_TRUE(std::holds_alternative<Heartbeat>(*Decode(Encode(Heartbeat{}))));
}

TEST(AgentProtocolTest, MalformedFramesNameTheProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not a JSON object"},
      {"[1,2]", "not a JSON object"},
      {"{}", "\"type\""},
      {R"({"type":"teleport"})", "teleport"},
      {R"({"type":"hello","slots":[]})", "\"agent_id\""},
      {R"({"type":"hello","agent_id":7,"slots":[]})", "\"agent_id\""},
      {R"({"type":"state","allocation_id":"1.0","rank":0,"state":"flying"})", "\"state\""},
      {R"({"type":"log","allocation_id":"1.0","rank":0,"lines":"x"})", "\"lines\""},
      {R"({"type":"start","allocation_id":"1.0"})", "\"allocation_token\""},
      {R"({"type":5})", "\"type\" has the wrong type"},
      {R"({"type":"hello","agent_id":"a","slots":[{"id":"zero","type":"cpu"}]})",
       "\"id\" has the wrong type"},
      {R"({"type":"hello","agent_id":"a","slots":[{"id":0}]})", "missing field \"type\""},
      {R"({"type":"hello","agent_id":"a","slots":{}})", "\"slots\""},
      {R"({"type":"welcome","heartbeat_interval_ms":100})", "missing field \"heartbeat_timeout_ms\""},
      {R"({"type":"kill","grace_ms":5})", "missing field \"allocation_id\""},
      {R"({"type":"state","allocation_id":"1.0","rank":0,"state":"exited","exit_code":"1"})",
       "\"exit_code\" has the wrong type"},
      {R"({"type":"log","allocation_id":"1.0","rank":0,"lines":[{"ts_ms":1}]})", "missing field \"line\""},
      {R"({"type":"start","allocation_id":"1.0","allocation_token":"t","trial_id":1,"experiment_id":1,)"
       R"("rank":0,"world_size":1,"local_rank":0,"local_world_size":1,"slot_ids":[0],"slot_type":"cpu",)"
       R"("entrypoint":"x","model_definition_path":"/m","environment":{"A":1}})",
       "\"environment\" has the wrong type"},
  };
  for (const auto& [frame, needle] : cases) {
    auto m = Decode(frame);
    ASSERT_FALSE(m.ok()) << frame;
    EXPECT_EQ(m.status().code(), ErrorCode::kInvalidArgument) << frame;
    EXPECT_NE(m.status().message().find(needle), std::string::npos) << frame << ": " << m.status().message();
  }
}

TEST(AgentProtocolTest, EveryProcessStateRoundTrips) {
  for (ProcessState state : {ProcessState::kStarting, ProcessState::kRunning, ProcessState::kExited}) {
    auto m = RoundTrip(StateChange{"1.0", 2, state, std::nullopt, std::nullopt, ""});
    EXPECT_EQ(m.state, state) << ToString(state);
    EXPECT_EQ(m.rank, 2);
  }
  EXPECT_EQ(ToString(ProcessState::kRunning), "running");
}

TEST(AgentProtocolTest, FramesAreTypedJsonObjects) {
  const auto frame = nlohmann::json::parse(Encode(Kill{"9.1", 250, "preempted"}));
  EXPECT_EQ(frame["type"], "kill");
  EXPECT_EQ(frame["allocation_id"], "9.1");
  EXPECT_EQ(frame["grace_ms"], 250);
  // Optional fields may be left out; defaults apply.
  auto hello = Decode(R"({"type":"hello","agent_id":"a","slots":[]})");
  ASSERT_TRUE(hello.ok()) << hello.status().message();
  EXPECT_EQ(std::get<Hello>(*hello).pool, "default");
  // Fields a newer peer adds are ignored.
  EXPECT_TRUE(Decode(R"({"type":"heartbeat","load":0.5})").ok());
}

}  // namespace
}  // namespace ring::proto
