#pragma once
// A fake Slurm for the Slurm resource manager's tests: sinfo and squeue
// answer what the test set, sbatch records each job (and leaves its folder
// and credential as the real commands do), sacct answers only when the test
// gave accounting; events and agent channels are recorded. SlurmRmTest
// starts a resource manager of pool "hpc" (partition "p") on it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/rm/slurmrm/slurm_rm.h"

namespace ring::slurm_rm_test {

inline std::string Sinfo(const std::string& n1_state = "idle") {
  return R"({"meta":{},"errors":[],"nodes":[
    {"name":"n1","state":")" +
         n1_state + R"J(","state_flags":[],"partitions":["p"],"cpus":2,"gres":""},
    {"name":"n2","state":"mixed","state_flags":[],"partitions":["p","q"],"cpus":2,"gres":"gpu:a100:4(S:0-1)"},
    {"name":"x9","state":"idle","state_flags":[],"partitions":["other"],"cpus":64,"gres":""}]
})J";
}

inline std::string Squeue(const std::vector<std::tuple<int, std::string, std::string>>& jobs) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [id, state, reason] : jobs)
    list.push_back(
        {{"job_id", id}, {"name", "ring"}, {"job_state", state}, {"state_reason", reason}, {"nodes", ""}});
  return nlohmann::json{
      {"meta", nlohmann::json::object()}, {"errors", nlohmann::json::array()}, {"jobs", list}}
      .dump();
}

class FakeSlurm : public SlurmCommands {
 public:
  struct Shared {
    std::string sinfo = Sinfo();
    std::string squeue = Squeue({});
    std::vector<std::vector<std::string>> submitted;
    std::vector<std::string> scripts;
    std::vector<int64_t> cancelled;
    std::vector<SbatchJob> jobs;
    std::string sacct;  // empty: no accounting
    std::vector<std::vector<int64_t>> sacct_asked;
    int64_t next_job = 100;
  };
  explicit FakeSlurm(Shared& shared) : s_(shared) {}
  Result<std::string> SinfoJson() override { return s_.sinfo; }
  Result<std::string> SqueueJson(const std::string&) override { return s_.squeue; }
  Result<std::string> SacctJson(const std::vector<int64_t>& ids) override {
    s_.sacct_asked.push_back(ids);
    if (s_.sacct.empty()) return Unavailable("sacct exited 1: Slurm accounting storage is disabled");
    return s_.sacct;
  }
  Result<int64_t> Sbatch(const SbatchJob& job) override {
    // The folder and credential, as the real commands leave them.
    std::filesystem::create_directories(job.folder);
    std::ofstream(job.folder + "/credential") << job.credential << "\n";
    s_.submitted.push_back(job.args);
    s_.scripts.push_back(job.script);
    s_.jobs.push_back(job);
    return s_.next_job++;
  }
  Status Scancel(int64_t job, const std::string&) override {
    s_.cancelled.push_back(job);
    return Status::Ok();
  }

 private:
  Shared& s_;
};

class RecordingEvents : public RmEvents {
 public:
  void OnRankState(const std::string& node, const proto::StateChange& c) override {
    states.emplace_back(node, c);
  }
  void OnLogs(const std::string&, proto::LogBatch) override { ++logs; }
  void OnNodeConnected(const std::string&, const std::vector<proto::RunningProcess>&, SteadyTime) override {}
  void OnNodeLost(const std::string& node) override { nodes_lost.push_back(node); }
  void OnAllocationLost(const std::string& id, const std::string& why) override {
    lost.emplace_back(id, why);
  }
  void OnAllocationNeverStarted(const std::string& id, const std::string& why) override {
    never_started.emplace_back(id, why);
  }
  void OnAllocationPreempted(const std::string& id, const std::string&) override { preempted.push_back(id); }
  void OnNodeEvicted(const std::string&) override {}
  void OnCapacityChanged() override { ++capacity; }
  std::vector<std::string> preempted;
  std::vector<std::pair<std::string, proto::StateChange>> states;
  std::vector<std::string> nodes_lost;
  std::vector<std::pair<std::string, std::string>> never_started;
  std::vector<std::pair<std::string, std::string>> lost;
  int logs = 0, capacity = 0;
};

class Channel : public AgentChannel {
 public:
  void Send(std::string frame) override { frames.push_back(*proto::Decode(frame)); }
  void Close(std::string reason) override { closed = reason; }
  template <typename T>
  std::vector<T> Of() const {
    std::vector<T> out;
    for (const auto& m : frames)
      if (auto* t = std::get_if<T>(&m)) out.push_back(*t);
    return out;
  }
  std::vector<proto::Message> frames;
  std::string closed;
};

class SlurmRmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("slurm-rm-" + std::to_string(::getpid()))).string();
    SlurmPoolOptions pool;
    pool.pool = "hpc";
    pool.partition = "p";
    pool.slot_type = SlurmSlotType::kCpu;
    pool.agent_binary = "/opt/ring/bin/ringagent";
    pool.account = "ml";
    SlurmRmSettings settings;
    settings.master_url = "http://10.0.0.1:8080";
    settings.job_dir = dir_;
    rm_ = std::make_unique<SlurmRm>(pool, settings, std::make_unique<FakeSlurm>(slurm_), events_);
    rm_->PollOnce();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  LaunchSpec Spec(const std::string& id, std::vector<Placement> placements) {
    LaunchSpec spec;
    spec.allocation_id = id;
    spec.token = "tok-" + id;
    spec.trial_id = 1;
    spec.experiment_id = 1;
    spec.placements = std::move(placements);
    int world = 0;
    for (const auto& p : spec.placements) world += static_cast<int>(p.slot_ids.size());
    spec.world_size = world;
    spec.entrypoint = "sh run.sh";
    return spec;
  }
  std::string Credential(const std::string& allocation) {
    std::ifstream in(dir_ + "/" + allocation + "/credential");
    std::string c;
    in >> c;
    return c;
  }
  proto::Hello Hello(const std::string& id) {
    proto::Hello h;
    h.agent_id = id;
    h.address = "10.0.0.3";
    return h;
  }

  std::string dir_;
  FakeSlurm::Shared slurm_;
  RecordingEvents events_;
  std::unique_ptr<SlurmRm> rm_;
};

}  // namespace ring::slurm_rm_test
