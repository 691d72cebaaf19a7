// Agent enrolments (agent id -> credential hash, pool, slots, removal) read
// back the same from both Store implementations, and survive a reopen.
#include <gtest/gtest.h>

#include "master/store/memory_store.h"
#include "master/store/sqlite_store.h"
#include "tests/unit/store/store_holders.h"

namespace ring {
namespace {

template <typename Holder>
class StoreAgentEnrolmentsTest : public ::testing::Test {
 protected:
  Store& store() { return *holder_.store; }
  Holder holder_;
};

using Stores = testing::BothStores;
TYPED_TEST_SUITE(StoreAgentEnrolmentsTest, Stores);

TYPED_TEST(StoreAgentEnrolmentsTest, AreKeptByIdAndReplacedWhole) {
  EXPECT_TRUE(this->store().ListAgentEnrolments()->empty());
  AgentEnrolmentRecord b{"b", std::string(64, 'b'), "gpu", 8, "2026-11-26T10:00:00.000Z", ""};
  AgentEnrolmentRecord a{"a", std::string(64, 'a'), "default", 1, "2026-11-26T09:00:00.000Z", ""};
  ASSERT_TRUE(this->store().PutAgentEnrolment(b).ok());
  ASSERT_TRUE(this->store().PutAgentEnrolment(a).ok());
  auto list = *this->store().ListAgentEnrolments();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].agent_id, "a");  // by id
  EXPECT_EQ(list[1].credential_hash, std::string(64, 'b'));
  EXPECT_EQ(list[1].pool, "gpu");
  EXPECT_EQ(list[1].slots, 8);
  EXPECT_TRUE(list[1].revoked_at.empty());

  b.revoked_at = "2026-11-26T11:00:00.000Z";
  b.slots = 4;
  ASSERT_TRUE(this->store().PutAgentEnrolment(b).ok());
  list = *this->store().ListAgentEnrolments();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].revoked_at, "2026-11-26T11:00:00.000Z");
  EXPECT_EQ(list[1].slots, 4);

  // Enrolled again: a new credential, no longer revoked.
  b = {"b", std::string(64, 'c'), "gpu", 8, "2026-11-26T12:00:00.000Z", ""};
  ASSERT_TRUE(this->store().PutAgentEnrolment(b).ok());
  list = *this->store().ListAgentEnrolments();
  EXPECT_EQ(list[1].credential_hash, std::string(64, 'c'));
  EXPECT_TRUE(list[1].revoked_at.empty());
  EXPECT_EQ(list[1].enrolled_at, "2026-11-26T12:00:00.000Z");

  EXPECT_FALSE(this->store().PutAgentEnrolment({"", "h", "p", 1, "t", ""}).ok());
}

// The Slurm job of a live allocation (master/rm/slurmrm): kept by
// allocation, replaced whole, gone when deleted.
TYPED_TEST(StoreAgentEnrolmentsTest, SlurmJobsAreKeptByAllocation) {
  EXPECT_EQ(this->store().GetSlurmJob("1.0").status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(this->store().PutSlurmJob({"1.0", 41, "hpc", std::string(64, 'a'), false, ""}).ok());
  ASSERT_TRUE(this->store().PutSlurmJob({"1.0", 42, "hpc", std::string(64, 'b'), true, ""}).ok());
  auto job = this->store().GetSlurmJob("1.0");
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->job_id, 42);
  EXPECT_EQ(job->pool, "hpc");
  EXPECT_EQ(job->credential_hash, std::string(64, 'b'));
  EXPECT_TRUE(job->per_node);
  EXPECT_FALSE(job->created_at.empty());
  EXPECT_FALSE(this->store().PutSlurmJob({"2.0", 0, "hpc", "h", false, ""}).ok());
  ASSERT_TRUE(this->store().DeleteSlurmJob("1.0").ok());
  EXPECT_EQ(this->store().GetSlurmJob("1.0").status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(this->store().DeleteSlurmJob("1.0").ok());
}

}  // namespace
}  // namespace ring
