// A restarted master and the Slurm jobs it left running, against a fake
// Slurm: it finds each job by the id it stored, lets the job's agents back
// in with their credential, and reports a job that ended meanwhile with
// sacct's answer.
#include <gtest/gtest.h>

#include <set>

#include "master/rm/slurmrm/slurm_rm.h"
#include "master/store/memory_store.h"
#include "tests/unit/master/slurm_rm_fixture.h"

namespace ring::slurm_rm_test {
namespace {

// Masters of one pool with one store, one after the other.
class SlurmRestartTest : public SlurmRmTest {
 protected:
  std::unique_ptr<SlurmRm> Master() {
    SlurmPoolOptions pool;
    pool.pool = "hpc";
    pool.partition = "p";
    pool.slot_type = SlurmSlotType::kCpu;
    pool.agent_binary = "/a";
    SlurmRmSettings settings;
    settings.master_url = "http://m:1";
    settings.job_dir = dir_;
    settings.store = &store;
    return std::make_unique<SlurmRm>(pool, settings, std::make_unique<FakeSlurm>(slurm_), events_);
  }
  MemoryStore store;
};

// A restarted master finds the job by the id it stored and lets the job's
// agents back in with the credential they hold; a job whose agents do not
// come back by the deadline is lost (and cancelled).
TEST_F(SlurmRestartTest, ARestartedMasterReattachesToItsJobs) {
  auto before = Master();
  before->PollOnce();
  before->Launch(Spec("1.0", {{"hpc:n1", {0, 1}}}));
  before->Launch(Spec("2.0", {{"hpc:n2", {0}}}));
  before->PollOnce();
  const std::string credential = Credential("1.0");
  ASSERT_EQ(store.GetSlurmJob("1.0")->job_id, 100);
  ASSERT_EQ(store.GetSlurmJob("2.0")->job_id, 101);
  before.reset();  // the master goes; the jobs run on

  auto owned_after = Master();
  SlurmRm& after = *owned_after;
  slurm_.squeue = Squeue({{100, "RUNNING", "None"}, {101, "RUNNING", "None"}});
  after.PollOnce();
  const auto now = std::chrono::steady_clock::now();
  after.Adopt("1.0", {{"hpc:n1", {0, 1}}}, 0, "hpc", now + std::chrono::seconds(10));
  after.Adopt("2.0", {{"hpc:n2", {0}}}, 0, "hpc", now + std::chrono::seconds(10));
  after.Adopt("3.0", {{"hpc:n2", {1}}}, 0, "hpc", now + std::chrono::seconds(10));  // never submitted
  EXPECT_TRUE(after.Offers()[0].free_slots.empty());                                // held again
  ASSERT_TRUE(after.Authenticate("Bearer " + credential, "slurm.100.n1", "peer").ok());
  auto channel = std::make_shared<Channel>();
  proto::Hello hello = Hello("slurm.100.n1");
  hello.running = {{"1.0", 0, 10}, {"1.0", 1, 11}};
  after.OnHello("slurm.100.n1", hello, channel, now);
  EXPECT_TRUE(channel->closed.empty());
  EXPECT_TRUE(channel->Of<proto::Start>().empty());  // its ranks run already
  after.OnMessage("slurm.100.n1", proto::StateChange{"1.0", 1, proto::ProcessState::kRunning, {}, {}, ""},
                  now);
  ASSERT_EQ(events_.states.size(), 1u);

  after.PollOnce();
  after.Tick(now + std::chrono::seconds(11));
  std::set<std::string> lost;
  for (const auto& [id, why] : events_.lost) lost.insert(id);
  EXPECT_EQ(lost, (std::set<std::string>{"2.0", "3.0"}));  // 1.0's agent is back
  after.PollOnce();
  EXPECT_NE(std::find(slurm_.cancelled.begin(), slurm_.cancelled.end(), 101), slurm_.cancelled.end());
  after.Release("1.0");
  after.PollOnce();
  EXPECT_EQ(store.GetSlurmJob("1.0").status().code(), ErrorCode::kNotFound);
}

// A job that ended while the master was down is gone from squeue when the
// restarted master adopts it: the first poll asks sacct, and the job is
// reported with its answer, not as one that merely left the queue.
TEST_F(SlurmRestartTest, AnAdoptedJobThatEndedWhileTheMasterWasDownIsReportedWithAccountingsAnswer) {
  auto before = Master();
  before->PollOnce();
  before->Launch(Spec("1.0", {{"hpc:n1", {0}}}));
  slurm_.squeue = Squeue({{100, "RUNNING", "None"}});
  before->PollOnce();
  ASSERT_EQ(store.GetSlurmJob("1.0")->job_id, 100);
  before.reset();  // the master goes; the job runs out of memory meanwhile

  slurm_.squeue = Squeue({});
  slurm_.sacct =
      R"({"jobs":[{"job_id":100,"name":"ring-1.0","state":{"current":"OUT_OF_MEMORY","reason":"None"},)"
      R"("exit_code":{"status":"FAILED","return_code":137}}]})";
  auto owned_after = Master();
  SlurmRm& after = *owned_after;
  const auto now = std::chrono::steady_clock::now();
  // As the master recovers: adopted before its first poll.
  after.Adopt("1.0", {{"hpc:n1", {0}}}, 0, "hpc", now + std::chrono::seconds(10));
  after.Tick(now);
  EXPECT_TRUE(events_.lost.empty()) << "nothing is judged before squeue and sacct were asked";
  after.PollOnce();
  ASSERT_EQ(slurm_.sacct_asked.size(), 1u) << "the first poll asks sacct about the missing job";
  EXPECT_EQ(slurm_.sacct_asked[0], (std::vector<int64_t>{100}));
  after.Tick(now);
  ASSERT_EQ(events_.lost.size(), 1u);
  EXPECT_EQ(events_.lost[0].first, "1.0");
  EXPECT_NE(events_.lost[0].second.find("ended (OUT_OF_MEMORY, exit code 137, as sacct reports it)"),
            std::string::npos)
      << events_.lost[0].second;

  // Adopted after a poll, the same: the next poll asks.
  events_.lost.clear();
  slurm_.sacct_asked.clear();
  auto owned_later = Master();
  SlurmRm& later = *owned_later;
  later.PollOnce();
  later.Adopt("1.0", {{"hpc:n1", {0}}}, 0, "hpc", now + std::chrono::seconds(10));
  later.Tick(now);
  EXPECT_TRUE(events_.lost.empty());
  later.PollOnce();
  later.Tick(now);
  ASSERT_EQ(events_.lost.size(), 1u);
  EXPECT_NE(events_.lost[0].second.find("as sacct reports it"), std::string::npos) << events_.lost[0].second;
}

}  // namespace
}  // namespace ring::slurm_rm_test
