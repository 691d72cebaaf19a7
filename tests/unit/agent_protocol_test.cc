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
  };
  for (const auto& [frame, needle] : cases) {
    auto m = Decode(frame);
    ASSERT_FALSE(m.ok()) << frame;
    EXPECT_EQ(m.status().code(), ErrorCode::kInvalidArgument) << frame;
    EXPECT_NE(m.status().message().find(needle), std::string::npos) << frame << ": " << m.status().message();
  }
}

}  // namespace
}  // namespace ring::proto
