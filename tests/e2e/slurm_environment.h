#pragma once
// The Slurm cluster the cases of slurm_e2e_tests share: one slurmctld and
// two slurmd in network namespaces, started by the first case that asks
// and stopped when the process ends; each case skips, saying why, where
// the machine cannot run Slurm.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "tests/support/slurm_cluster.h"
#include "tests/support/test_cluster.h"

namespace ring::testing {

// The one Slurm cluster of this process, started by the first case that
// asks and stopped when the process ends (gtest Environment teardown).
class SlurmEnvironment : public ::testing::Environment {
 public:
  static SlurmCluster* Get(std::string* why) {
    if (!instance_) return nullptr;
    return instance_->Cluster(why);
  }
  void SetUp() override { instance_ = this; }
  void TearDown() override {
    cluster_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    instance_ = nullptr;
  }

 private:
  SlurmCluster* Cluster(std::string* why) {
    if (!tried_) {
      tried_ = true;
      why_ = SlurmCluster::WhyUnavailable();
      if (why_.empty()) {
        char templ[] = "/tmp/ring-slurm-XXXXXX";
        dir_ = mkdtemp(templ);
        // Accounts other than root submit too (the submit helper runs
        // sbatch as each job's owner): they pass through to slurm.conf and
        // munge's socket.
        std::filesystem::permissions(dir_, std::filesystem::perms(0711),
                                     std::filesystem::perm_options::replace);
        cluster_ = std::make_unique<SlurmCluster>(dir_);
        if (!cluster_->ok()) why_ = "Slurm did not start: " + cluster_->error();
        // The masters these tests start (and their sbatch) talk to this cluster.
        if (why_.empty()) setenv("SLURM_CONF", cluster_->conf().c_str(), 1);
      }
    }
    *why = why_;
    return why_.empty() ? cluster_.get() : nullptr;
  }

  static inline SlurmEnvironment* instance_ = nullptr;  // set by gtest (kSlurm)
  bool tried_ = false;
  std::string why_;
  std::string dir_;
  std::unique_ptr<SlurmCluster> cluster_;
};

#define RING_NEED_SLURM(var)                                \
  std::string why_no_slurm;                                 \
  SlurmCluster* var = SlurmEnvironment::Get(&why_no_slurm); \
  if (!var) GTEST_SKIP() << why_no_slurm;

// A master whose pool "default" is the Slurm partition, listening on the
// bridge so that the jobs' agents and ranks in the nodes' namespaces reach it.
// Every job runs as the master's account (root): single identity. The
// submit helper's runs as owners are in slurm_identity_e2e_test.cc.
// `slots_per_node` 1 makes a 2-slot trial span both nodes.
// `more`: more lines of the pool's resource_manager; `master_lines`: more
// top-level lines of master.yaml.
inline TestCluster::MasterOptions SlurmMasterOptions(TestCluster& cluster, const SlurmCluster& slurm,
                                                     int slots_per_node = 2, const std::string& more = "",
                                                     const std::string& master_lines = "") {
  const std::string config = cluster.WriteFile(
      "master.yaml", master_lines +
                         "resource_pools:\n  - name: default\n    resource_manager:\n      type: slurm\n"
                         "      partition: " +
                         slurm.partition() + "\n      slot_type: cpu\n      slots_per_node: " +
                         std::to_string(slots_per_node) + "\n      agent_binary: " + BinDir() +
                         "/ringagent\n      poll_interval_ms: 200\n      agent_connect_timeout_ms: 60000\n"
                         "      single_identity: true\n" +
                         more);
  TestCluster::MasterOptions options;
  options.host = slurm.bridge_address();
  options.extra_args = {"--config", config};
  return options;
}

inline void StartSlurmMaster(TestCluster& cluster, const SlurmCluster& slurm) {
  cluster.StartMaster(SlurmMasterOptions(cluster, slurm));
}

// The Slurm job id of a live job agent (the one trial's), 0 if none.
inline int64_t LiveSlurmJob(TestCluster& cluster) {
  const auto agents = cluster.GetJson("/api/v1/agents");
  for (const auto& a : agents["agents"])
    if (a.contains("slurm_job_id")) return a["slurm_job_id"].get<int64_t>();
  return 0;
}

// The quadratic example, slowed (10 ms a batch) to 500 batches, with a
// checkpoint every 200: long enough to act on its job while it trains.
inline std::string SlowQuadraticConfig(TestCluster& cluster, const std::string& name) {
  return cluster.WriteFile(
      name + ".yaml",
      "name: " + name +
          "\nentrypoint: sh run.sh\nhyperparameters:\n  learning_rate: 0.05\n  batch_size: 32\n"
          "  report_every: 25\n  momentum: 0.0\n  checkpoint_every: 200\n  batch_sleep_ms: 10\n"
          "searcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: 500\n"
          "max_restarts: 0\nmin_checkpoint_period:\n  batches: 200\n");
}

// Waits (up to `timeout`) for experiment `exp` to end; its last state.
// `on_poll` runs at each look, e.g. to note the live Slurm job.
inline std::string WaitFinalState(TestCluster& cluster, int64_t exp, std::chrono::milliseconds timeout,
                                  const std::function<void()>& on_poll = {}) {
  std::string state;
  TestCluster::WaitFor(
      [&] {
        if (on_poll) on_poll();
        state = cluster.GetJson("/api/v1/experiments/" + std::to_string(exp)).value("state", "");
        return state == "COMPLETED" || state == "ERROR" || state == "CANCELED";
      },
      timeout);
  return state;
}

inline ::testing::Environment* const kSlurm = ::testing::AddGlobalTestEnvironment(new SlurmEnvironment);

}  // namespace ring::testing
