// Ringmaster on a real Slurm: a slurmctld and two slurmd, each in a network
// namespace of its own (tests/support/slurm_cluster.h). One Slurm cluster
// serves every case of one run of this binary (SlurmEnvironment); each case
// skips, saying why, where the machine cannot run Slurm.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "tests/support/slurm_cluster.h"
#include "tests/support/test_cluster.h"

namespace ring::testing::slurm_e2e {
namespace {

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
        cluster_ = std::make_unique<SlurmCluster>(dir_);
        if (!cluster_->ok()) why_ = "Slurm did not start: " + cluster_->error();
      }
    }
    *why = why_;
    return why_.empty() ? cluster_.get() : nullptr;
  }

  static inline SlurmEnvironment* instance_ = nullptr;
  bool tried_ = false;
  std::string why_;
  std::string dir_;
  std::unique_ptr<SlurmCluster> cluster_;
};

[[maybe_unused]] ::testing::Environment* const kSlurm =
    ::testing::AddGlobalTestEnvironment(new SlurmEnvironment);

#define RING_NEED_SLURM(var)                                \
  std::string why_no_slurm;                                 \
  SlurmCluster* var = SlurmEnvironment::Get(&why_no_slurm); \
  if (!var) GTEST_SKIP() << why_no_slurm;

TEST(SlurmE2E, ClusterRunsOneTaskOnEachNode) {
  RING_NEED_SLURM(slurm);
  auto r = slurm->Run({"srun", "-N2", "-l", "hostname"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0: n1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1: n2"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ring::testing::slurm_e2e
