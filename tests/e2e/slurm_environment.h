#pragma once
// The Slurm cluster the cases of slurm_e2e_tests share: one slurmctld and
// two slurmd in network namespaces, started by the first case that asks
// and stopped when the process ends; each case skips, saying why, where
// the machine cannot run Slurm.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/slurm_cluster.h"

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

inline ::testing::Environment* const kSlurm = ::testing::AddGlobalTestEnvironment(new SlurmEnvironment);

}  // namespace ring::testing
