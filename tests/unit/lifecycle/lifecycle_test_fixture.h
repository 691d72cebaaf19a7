#pragma once
// What the controller's component tests share: agent channels that record
// what the master sends, and a controller on the in-memory store with a
// model folder to submit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/archive.h"
#include "master/store/memory_store.h"
#include "tests/support/lifecycle_driver.h"

namespace ring::testing {

using namespace std::chrono_literals;

class RecordingChannel : public AgentChannel {
 public:
  void Send(std::string frame) override { frames.push_back(std::move(frame)); }
  void Close(std::string reason) override { closed = reason; }
  std::vector<proto::Message> Messages() const {
    std::vector<proto::Message> out;
    for (const auto& f : frames) out.push_back(*proto::Decode(f));
    return out;
  }
  template <typename T>
  std::vector<T> Of() const {
    std::vector<T> out;
    for (const auto& m : Messages())
      if (auto* t = std::get_if<T>(&m)) out.push_back(*t);
    return out;
  }
  std::vector<std::string> frames;
  std::string closed;
};

class LifecycleFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    dir_ = fs::temp_directory_path() / ("ctl-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "run.sh") << "#!/bin/sh\n";
    model_ = *PackDirectory(dir_.string());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int64_t CreateFrom(const std::string& config) {
    auto id = controller_.CreateExperiment(config, model_, true, "alice");
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  std::shared_ptr<RecordingChannel> Connect(const std::string& id, int slots) {
    auto channel = std::make_shared<RecordingChannel>();
    proto::Hello hello{id, "default", "10.0.0.1", "test", {}, {}};
    for (int i = 0; i < slots; ++i) hello.slots.push_back({i, "cpu", ""});
    controller_.OnAgentHello(hello, channel, now_);
    return channel;
  }

  void Report(const std::string& agent, const std::string& alloc, proto::ProcessState state,
              std::optional<int> code = std::nullopt, std::optional<int> signal = std::nullopt) {
    controller_.OnAgentMessage(agent, proto::StateChange{alloc, 0, state, code, signal, ""}, now_);
  }

  std::filesystem::path dir_;
  std::string model_;
  MemoryStore store_;
  DriverOptions options_ = [] {
    DriverOptions o;
    o.heartbeat_timeout = 3s;
    o.reconnect_window = 2s;
    // Real folders: registration checks the files the trial wrote.
    o.checkpoint_root =
        (std::filesystem::temp_directory_path() / ("ring-lifecycle-ckpt-" + std::to_string(::getpid())))
            .string();
    return o;
  }();
  LifecycleDriver controller_{store_, options_};
  SteadyTime now_ = std::chrono::steady_clock::now();
};

}  // namespace ring::testing
