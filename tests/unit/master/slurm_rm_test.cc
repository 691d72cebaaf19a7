// The Slurm resource manager against a fake Slurm: what it reads from sinfo
// and squeue, what it asks sbatch for, the job agents' admission (a
// credential opens its own allocation's nodes only), and what a job's end
// means for the lifecycle. The job scripts and the real commands are in
// slurm_commands_test.cc; a restarted master's jobs in
// slurm_rm_restart_test.cc.
#include "master/rm/slurmrm/slurm_rm.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "master/interactive/terminal_relay.h"
#include "master/rm/agentrm/agent_rm.h"
#include "master/rm/routing_rm.h"
#include "master/rm/slurmrm/job_agent_admission.h"
#include "master/rm/slurmrm/slurm_job_script.h"
#include "master/rm/slurmrm/slurm_state.h"
#include "master/store/memory_store.h"
#include "tests/unit/master/slurm_rm_fixture.h"

namespace ring {
namespace slurm_rm_test {
namespace {

TEST(SlurmState, SinfoAndSqueueJsonAreRead) {
  auto nodes = ParseSinfoJson(Sinfo("down"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].name, "n1");
  EXPECT_FALSE((*nodes)[0].usable);  // down
  EXPECT_TRUE((*nodes)[1].usable);
  EXPECT_EQ((*nodes)[1].gpus, 4);
  EXPECT_EQ((*nodes)[1].partitions, (std::vector<std::string>{"p", "q"}));
  auto drained = ParseSinfoJson(
      R"({"errors":[],"nodes":[{"name":"a","state":"IDLE","state_flags":["DRAIN"],"partitions":["p"],"cpus":1}]})");
  ASSERT_TRUE(drained.ok());
  EXPECT_FALSE(drained->front().usable);
  EXPECT_FALSE(ParseSinfoJson("sinfo: error: no").ok());
  EXPECT_FALSE(ParseSinfoJson(R"({"errors":[{"error":"x"}],"nodes":[]})").ok());

  auto jobs = ParseSqueueJson(Squeue({{7, "PENDING", "Priority"}}));
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->front().id, 7);
  EXPECT_EQ(jobs->front().reason, "Priority");
  // Later Slurm versions: states as arrays, numbers as {"set","number"}.
  auto later = ParseSqueueJson(
      R"({"jobs":[{"job_id":{"set":true,"number":9},"job_state":["RUNNING"],"state_reason":"None"}]})");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->front().id, 9);
  EXPECT_EQ(later->front().state, "RUNNING");

  EXPECT_EQ(GpusInGres("gpu:2,gpu:v100:1(IDX:0),license:3"), 3);
  EXPECT_TRUE(SlurmJobEnded("NODE_FAIL"));
  EXPECT_FALSE(SlurmJobEnded("RUNNING"));
  EXPECT_NE(DescribePendingReason("Resources").find("free nodes"), std::string::npos);
  EXPECT_NE(DescribePendingReason("Priority").find("higher priority"), std::string::npos);
  EXPECT_NE(DescribePendingReason("SomethingNew").find("\"SomethingNew\""), std::string::npos);
}

TEST_F(SlurmRmTest, OffersThePartitionsNodesWithTheirFreeSlots) {
  auto offers = rm_->Offers();
  ASSERT_EQ(offers.size(), 2u);  // x9 is in another partition
  EXPECT_EQ(offers[0].id, "hpc:n1");
  EXPECT_EQ(offers[0].pool, "hpc");
  EXPECT_EQ(offers[0].slot_type, "cpu");
  EXPECT_EQ(offers[0].free_slots, (std::vector<int>{0, 1}));
  rm_->Launch(Spec("1.0", {{"hpc:n1", {0}}}));
  EXPECT_EQ(rm_->Offers()[0].free_slots, (std::vector<int>{1}));
  slurm_.sinfo = Sinfo("down");
  rm_->PollOnce();
  EXPECT_FALSE(rm_->Offers()[0].enabled);
  EXPECT_GE(events_.capacity, 1);
  ResourcesConfig r;
  r.resource_pool = "hpc";
  r.slots_per_trial = 4;
  EXPECT_TRUE(rm_->CheckFits(r, {}).ok());  // two nodes of two
  r.is_single_node = true;
  r.is_single_node_line = 9;
  const Status single = rm_->CheckFits(r, {});
  EXPECT_EQ(single.code(), ErrorCode::kInvalidConfig);
  EXPECT_NE(single.message().find("experiment.yaml:9: resources.is_single_node"), std::string::npos)
      << single.message();
  r.is_single_node = std::nullopt;
  r.slots_per_trial = 6;
  EXPECT_FALSE(rm_->CheckFits(r, {}).ok());           // never
  EXPECT_TRUE(offers[0].container_runtimes.empty());  // the pool declares none
}

TEST_F(SlurmRmTest, ImagesAreRefusedUnlessThePoolDeclaresAContainerRuntime) {
  const Status refused = rm_->CheckContainers("hpc", "");
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidConfig);
  EXPECT_NE(refused.message().find("pool hpc runs its trials as Slurm jobs (partition p)"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("resource_manager.container_runtime"), std::string::npos)
      << refused.message();

  SlurmPoolOptions pool;
  pool.pool = "hpc";
  pool.partition = "p";
  pool.slot_type = SlurmSlotType::kCpu;
  pool.agent_binary = "/opt/ring/bin/ringagent";
  pool.container_runtime = "podman";
  SlurmRmSettings settings;
  settings.master_url = "http://10.0.0.1:8080";
  settings.job_dir = dir_;
  RecordingEvents events;
  SlurmRm rm(pool, settings, std::make_unique<FakeSlurm>(slurm_), events);
  rm.PollOnce();
  EXPECT_TRUE(rm.CheckContainers("hpc", "").ok());
  EXPECT_TRUE(rm.CheckContainers("hpc", "podman").ok());
  EXPECT_EQ(rm.CheckContainers("hpc", "docker").code(), ErrorCode::kInvalidConfig);
  // Its nodes offer the runtime to the scheduler, and the job agents are
  // told to use it.
  const auto offers = rm.Offers();
  ASSERT_FALSE(offers.empty());
  EXPECT_EQ(offers[0].container_runtimes, (std::vector<std::string>{"podman"}));
  rm.Launch(Spec("1.0", {{"hpc:n1", {0}}}));
  rm.PollOnce();
  ASSERT_EQ(slurm_.scripts.size(), 1u);
  EXPECT_NE(slurm_.scripts[0].find("--container-runtimes 'podman'"), std::string::npos) << slurm_.scripts[0];
  // The job agents' own runtimes are listed as their hellos say.
  auto a1 = rm.Authenticate("Bearer " + Credential("1.0"), "slurm.100.n1", "peer");
  ASSERT_TRUE(a1.ok()) << a1.status().message();
  proto::Hello hello = Hello("slurm.100.n1");
  hello.container_runtimes.push_back({"podman", "4.3.1", false});
  rm.OnHello("slurm.100.n1", hello, std::make_shared<Channel>(), {});
  ASSERT_EQ(rm.AgentsJson().size(), 1u);
  EXPECT_EQ(rm.AgentsJson()[0]["container_runtimes"][0]["name"], "podman");
}

TEST_F(SlurmRmTest, LaunchSubmitsOneJobWhoseAgentsGetTheirNodesRanks) {
  rm_->Launch(Spec("1.0", {{"hpc:n1", {0, 1}}, {"hpc:n2", {0, 1}}}));
  rm_->PollOnce();  // sbatch runs on the command thread
  ASSERT_EQ(slurm_.submitted.size(), 1u);
  const auto& args = slurm_.submitted[0];
  EXPECT_NE(std::find(args.begin(), args.end(), "--nodelist=n1,n2"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--cpus-per-task=2"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--exclusive"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--account=ml"), args.end());
  EXPECT_NE(slurm_.scripts[0].find("--credential-file '" + dir_ + "/1.0/credential'"), std::string::npos);
  EXPECT_EQ(slurm_.jobs[0].folder, dir_ + "/1.0");
  ASSERT_EQ(rm_->Job("1.0")->job_id, 100);

  const std::string credential = Credential("1.0");
  auto a1 = rm_->Authenticate("Bearer " + credential, "slurm.100.n1", "peer");
  ASSERT_TRUE(a1.ok()) << a1.status().message();
  auto c1 = std::make_shared<Channel>();
  auto c2 = std::make_shared<Channel>();
  rm_->OnHello("slurm.100.n1", Hello("slurm.100.n1"), c1, {});
  EXPECT_TRUE(c1->Of<proto::Start>().empty());  // its gang is not all there
  rm_->OnHello("slurm.100.n2", Hello("slurm.100.n2"), c2, {});
  auto s1 = c1->Of<proto::Start>();
  auto s2 = c2->Of<proto::Start>();
  ASSERT_EQ(s1.size(), 2u);
  ASSERT_EQ(s2.size(), 2u);
  EXPECT_EQ(s1[0].rank, 0);
  EXPECT_EQ(s2[1].rank, 3);
  EXPECT_EQ(s2[0].node_rank, 1);
  EXPECT_EQ(s1[0].slot_type, "cpu");
  EXPECT_EQ(rm_->AgentsJson().size(), 2u);
  EXPECT_EQ(rm_->AgentsJson()[0]["slurm_job_id"], 100);

  // States flow to the lifecycle under the Slurm node's id.
  proto::StateChange exited{"1.0", 2, proto::ProcessState::kExited, 0, std::nullopt, ""};
  rm_->OnMessage("slurm.100.n2", exited, {});
  ASSERT_EQ(events_.states.size(), 1u);
  EXPECT_EQ(events_.states[0].first, "hpc:n2");
}

// The attack test: a credential opens only its own allocation's job and
// nodes, and that channel reports only that allocation's ranks on its node.
TEST_F(SlurmRmTest, ACredentialOfOneAllocationCannotSpeakForAnother) {
  rm_->Launch(Spec("A", {{"hpc:n1", {0}}}));
  rm_->Launch(Spec("B", {{"hpc:n2", {0}}}));
  rm_->PollOnce();
  const std::string a = Credential("A");
  const std::string b = Credential("B");
  ASSERT_NE(a, b);
  // A's credential for B's job (100 is A's, 101 B's), or a node outside A's job.
  EXPECT_FALSE(rm_->Authenticate("Bearer " + a, "slurm.101.n2", "peer").ok());
  EXPECT_FALSE(rm_->Authenticate("Bearer " + a, "slurm.100.n2", "peer").ok());
  EXPECT_FALSE(rm_->Authenticate("Bearer " + a, "slurm.999.n1", "peer").ok());
  EXPECT_FALSE(rm_->Authenticate("Bearer nonsense", "slurm.100.n1", "peer").ok());
  EXPECT_FALSE(rm_->Authenticate("Bearer " + a, "n1", "peer").ok());
  ASSERT_TRUE(rm_->Authenticate("Bearer " + a, "slurm.100.n1", "peer").ok());

  // Its hello naming B's agent is refused.
  auto forged = std::make_shared<Channel>();
  rm_->OnHello("slurm.100.n1", Hello("slurm.101.n2"), forged, {});
  EXPECT_FALSE(forged->closed.empty());
  EXPECT_TRUE(forged->Of<proto::Start>().empty());

  auto channel = std::make_shared<Channel>();
  rm_->OnHello("slurm.100.n1", Hello("slurm.100.n1"), channel, {});
  ASSERT_EQ(channel->Of<proto::Start>().size(), 1u);
  // Reports of B's rank, or of a rank A does not have, never reach the lifecycle.
  rm_->OnMessage("slurm.100.n1",
                 proto::StateChange{"B", 0, proto::ProcessState::kExited, 1, std::nullopt, ""}, {});
  rm_->OnMessage("slurm.100.n1",
                 proto::StateChange{"A", 5, proto::ProcessState::kExited, 1, std::nullopt, ""}, {});
  rm_->OnMessage("slurm.100.n1", proto::LogBatch{"B", 0, 1, {}}, {});
  EXPECT_TRUE(events_.states.empty());
  EXPECT_EQ(events_.logs, 0);
  // Once A is released, its credential opens nothing.
  rm_->Release("A");
  EXPECT_FALSE(rm_->Authenticate("Bearer " + a, "slurm.100.n1", "peer").ok());
  rm_->PollOnce();  // the command thread removes the credential file
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/A/credential"));
}

TEST_F(SlurmRmTest, AJobThatEndsBeforeItsRanksReportIsAnInfrastructureFailure) {
  rm_->Launch(Spec("1.0", {{"hpc:n1", {0}}}));
  rm_->Launch(Spec("2.0", {{"hpc:n2", {0}}}));
  rm_->Launch(Spec("3.0", {{"hpc:n2", {1}}}));
  rm_->PollOnce();
  const auto now = std::chrono::steady_clock::now();
  slurm_.squeue =
      Squeue({{100, "NODE_FAIL", "None"}, {101, "RUNNING", "None"}, {102, "PENDING", "Resources"}});
  rm_->PollOnce();
  rm_->Tick(now);
  ASSERT_EQ(events_.lost.size(), 1u);
  EXPECT_EQ(events_.lost[0].first, "1.0");
  EXPECT_NE(events_.lost[0].second.find("NODE_FAIL"), std::string::npos);
  EXPECT_EQ(rm_->Job("3.0")->reason, "Resources");

  // 2.0's rank reported its exit: its job's end is no loss. 3.0 vanished
  // from the queue without one (scancel): lost.
  auto channel = std::make_shared<Channel>();
  rm_->OnHello("slurm.101.n2", Hello("slurm.101.n2"), channel, {});
  rm_->OnMessage("slurm.101.n2",
                 proto::StateChange{"2.0", 0, proto::ProcessState::kExited, 0, std::nullopt, ""}, {});
  // A rank its agent stopped because Slurm stopped the agent is not the trial's exit.
  slurm_.squeue = Squeue({{101, "COMPLETED", "None"}});
  rm_->PollOnce();
  rm_->Tick(now);
  ASSERT_EQ(events_.lost.size(), 2u);
  EXPECT_EQ(events_.lost[1].first, "3.0");

  // Kill of a job whose agents are not there yet cancels it at once.
  rm_->Launch(Spec("4.0", {{"hpc:n1", {1}}}));
  rm_->PollOnce();
  rm_->Kill("4.0", {}, EndCause::kUserKill);
  rm_->PollOnce();
  EXPECT_NE(std::find(slurm_.cancelled.begin(), slurm_.cancelled.end(), 103), slurm_.cancelled.end());
}

// A shell on a Slurm pool: its rank starts in a terminal, and the master's
// terminal relay reaches it through the job agent of its node (RoutingRm
// sends by agent id, our own agents' or a job's). Another job's agent can
// neither write into nor end its session, and the job agent's disconnect
// ends it.
TEST_F(SlurmRmTest, AShellsTerminalIsRelayedThroughItsJobAgentOnly) {
  SlurmPoolOptions pool;
  pool.pool = "hpc";
  pool.partition = "p";
  pool.slot_type = SlurmSlotType::kCpu;
  pool.agent_binary = "/opt/ring/bin/ringagent";
  std::unique_ptr<TerminalRelay> relay;
  SlurmRmSettings settings;
  settings.master_url = "http://10.0.0.1:8080";
  settings.job_dir = dir_;
  settings.terminal_message = [&](const std::string& agent, const proto::Message& m) {
    return relay->FromAgent(agent, m);
  };
  settings.terminals_gone = [&](const std::string& agent) { relay->AgentGone(agent, "job agent gone"); };
  RecordingEvents events;
  MemoryStore store;
  std::vector<std::unique_ptr<SlurmRm>> pools;
  pools.push_back(std::make_unique<SlurmRm>(pool, settings, std::make_unique<FakeSlurm>(slurm_), events));
  SlurmRm& rm = *pools.front();
  RoutingRm routing(std::make_unique<AgentRm>(store, AgentRmOptions{}, events), std::move(pools));
  relay = std::make_unique<TerminalRelay>(
      [&](const std::string& agent, const proto::Message& m) { return routing.SendToAgent(agent, m); });
  rm.PollOnce();
  LaunchSpec shell = Spec("shell-1.0", {{"hpc:n1", {0}}});
  shell.task_kind = TaskKind::kShell;
  rm.Launch(shell);
  rm.Launch(Spec("B", {{"hpc:n2", {0}}}));
  rm.PollOnce();  // jobs 100 (the shell's) and 101
  EXPECT_FALSE(routing.JobAgentOn("shell-1.0", "hpc:n1")) << "no job agent said hello yet";

  auto shell_agent = std::make_shared<Channel>();
  auto other_agent = std::make_shared<Channel>();
  routing.OnHello("slurm.100.n1", Hello("slurm.100.n1"), shell_agent, {});
  routing.OnHello("slurm.101.n2", Hello("slurm.101.n2"), other_agent, {});
  ASSERT_EQ(shell_agent->Of<proto::Start>().size(), 1u);
  EXPECT_TRUE(shell_agent->Of<proto::Start>()[0].terminal);
  EXPECT_FALSE(other_agent->Of<proto::Start>()[0].terminal);
  const auto view = routing.JobAgentOn("shell-1.0", "hpc:n1");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->id, "slurm.100.n1");
  EXPECT_EQ(view->address, "10.0.0.3");
  EXPECT_TRUE(view->connected);
  EXPECT_FALSE(routing.JobAgentOn("shell-1.0", "hpc:n2"));
  EXPECT_FALSE(routing.JobAgentOn("shell-1.0", "a1")) << "our own agents are their nodes";
  EXPECT_TRUE(routing.IsSlurmNode("hpc:n1"));
  EXPECT_FALSE(routing.IsSlurmNode("a1"));

  std::vector<std::string> output, closed;
  auto session = relay->Open(view->id, "shell-1.0", 0, 24, 80,
                             {[&](std::string bytes) { output.push_back(bytes); },
                              [&](std::string reason) { closed.push_back(reason); }});
  ASSERT_TRUE(session.ok()) << session.status().message();
  ASSERT_EQ(shell_agent->Of<proto::TerminalOpen>().size(), 1u);
  EXPECT_EQ(shell_agent->Of<proto::TerminalOpen>()[0].allocation_id, "shell-1.0");
  relay->Input(*session, "ls\r");
  ASSERT_EQ(shell_agent->Of<proto::TerminalInput>().size(), 1u);
  EXPECT_TRUE(other_agent->Of<proto::TerminalInput>().empty());
  routing.OnMessage("slurm.100.n1", proto::TerminalOutput{*session, "file\r\n"}, {});
  EXPECT_EQ(output, std::vector<std::string>{"file\r\n"});

  // Another job's agent: refused, and told to stop sending the session.
  routing.OnMessage("slurm.101.n2", proto::TerminalOutput{*session, "rm -rf ~\r"}, {});
  routing.OnMessage("slurm.101.n2", proto::TerminalClosed{*session, "fake"}, {});
  EXPECT_EQ(output.size(), 1u);
  EXPECT_TRUE(closed.empty());
  EXPECT_EQ(other_agent->Of<proto::TerminalClose>().size(), 1u);
  EXPECT_EQ(relay->sessions(), 1u);
  // Nor can anyone send as an agent that is not connected.
  EXPECT_EQ(routing.SendToAgent("slurm.999.n1", proto::TerminalClose{*session}).code(),
            ErrorCode::kUnavailable);
  EXPECT_EQ(routing.SendToAgent("a1", proto::TerminalClose{*session}).code(), ErrorCode::kUnavailable);

  // The job agent's connection ends: so does its session.
  routing.OnDisconnected("slurm.100.n1", shell_agent.get(), {});
  EXPECT_EQ(closed, std::vector<std::string>{"job agent gone"});
  EXPECT_EQ(relay->sessions(), 0u);
  EXPECT_FALSE(routing.JobAgentOn("shell-1.0", "hpc:n1")->connected);
  EXPECT_FALSE(relay->Open("slurm.100.n1", "shell-1.0", 0, 24, 80, {}).ok());
}

// A job whose batch script ended before any of its agents connected, or
// that Slurm refused, could not start as set up: the attempt fails (and
// counts), where trying again the same way would loop. A job cancelled
// while it waited is the infrastructure's doing.
TEST_F(SlurmRmTest, AJobWhoseAgentsNeverConnectedFailsTheAttempt) {
  rm_->Launch(Spec("1.0", {{"hpc:n1", {0}}}));
  rm_->Launch(Spec("2.0", {{"hpc:n2", {0}}}));
  rm_->PollOnce();
  slurm_.squeue = Squeue({{100, "FAILED", "NonZeroExitCode"}, {101, "CANCELLED", "None"}});
  rm_->PollOnce();
  rm_->Tick(std::chrono::steady_clock::now());
  ASSERT_EQ(events_.never_started.size(), 1u);
  EXPECT_EQ(events_.never_started[0].first, "1.0");
  EXPECT_NE(
      events_.never_started[0].second.find("no agent of it connected: see " + dir_ + "/1.0/slurm-100.out"),
      std::string::npos)
      << events_.never_started[0].second;
  ASSERT_EQ(events_.lost.size(), 1u);
  EXPECT_EQ(events_.lost[0].first, "2.0");
}

// Where the site keeps accounting, a job that left the queue without its
// ranks' exits is reported with sacct's answer: asked once, for our jobs
// only; a NODE_FAIL there is a node failure.
TEST_F(SlurmRmTest, AJobThatLeftTheQueueIsReportedWithAccountingsAnswer) {
  rm_->Launch(Spec("1.0", {{"hpc:n1", {0}}}));
  rm_->Launch(Spec("2.0", {{"hpc:n2", {0}}}));
  slurm_.squeue = Squeue({{100, "RUNNING", "None"}, {101, "RUNNING", "None"}, {555, "RUNNING", "None"}});
  rm_->PollOnce();  // sbatch, then the first squeue that must list them
  rm_->PollOnce();
  EXPECT_TRUE(slurm_.sacct_asked.empty()) << "both are in the queue";
  slurm_.sacct =
      R"({"jobs":[{"job_id":100,"name":"ring-1.0","state":{"current":"OUT_OF_MEMORY","reason":"None"},)"
      R"("exit_code":{"status":"FAILED","return_code":137}},)"
      R"({"job_id":101,"state":{"current":["NODE_FAIL"],"reason":"None"},"exit_code":{"return_code":{"set":true,"number":1}}}]})";
  slurm_.squeue = Squeue({{555, "RUNNING", "None"}});
  rm_->PollOnce();
  ASSERT_EQ(slurm_.sacct_asked.size(), 1u);
  EXPECT_EQ(slurm_.sacct_asked[0], (std::vector<int64_t>{100, 101}));
  rm_->Tick(std::chrono::steady_clock::now());
  ASSERT_EQ(events_.lost.size(), 2u);
  EXPECT_NE(events_.lost[0].second.find("ended (OUT_OF_MEMORY, exit code 137, as sacct reports it)"),
            std::string::npos)
      << events_.lost[0].second;
  EXPECT_NE(events_.lost[1].second.find("lost a node (NODE_FAIL)"), std::string::npos)
      << events_.lost[1].second;
  rm_->PollOnce();
  EXPECT_EQ(slurm_.sacct_asked.size(), 1u) << "each job is asked about once";
}

// The submit helper's question: the grant answers only to the allocation's
// own credential, and names the owner's account and the job's nodes.
TEST_F(SlurmRmTest, AGrantAnswersOnlyItsOwnCredential) {
  auto spec = Spec("1.0", {{"hpc:n1", {0}}, {"hpc:n2", {0}}});
  spec.run_as = proto::RunAs{1500, 1600, "carol", "carol"};
  rm_->Launch(spec);
  rm_->Launch(Spec("2.0", {{"hpc:n1", {1}}}));
  rm_->PollOnce();
  const std::string mine = Credential("1.0");
  const std::string other = Credential("2.0");
  auto grant = rm_->GrantFor("1.0", mine);
  ASSERT_TRUE(grant);
  EXPECT_EQ(grant->nodes, (std::vector<std::string>{"n1", "n2"}));
  ASSERT_TRUE(grant->run_as);
  EXPECT_EQ(grant->run_as->uid, 1500);
  EXPECT_FALSE(rm_->GrantFor("1.0", other)) << "another allocation's credential";
  EXPECT_FALSE(rm_->GrantFor("1.0", "")) << "no credential";
  EXPECT_FALSE(rm_->GrantFor("9.0", mine)) << "an allocation that does not exist";
  EXPECT_FALSE(rm_->GrantFor("2.0", other)->run_as) << "an unlinked owner's grant has no account";
  rm_->Release("1.0");
  EXPECT_FALSE(rm_->GrantFor("1.0", mine)) << "a released allocation";
}

TEST_F(SlurmRmTest, ExitsOfRanksStoppedWithTheirAgentAreHeldBack) {
  rm_->Launch(Spec("1.0", {{"hpc:n1", {0}}}));
  rm_->PollOnce();
  auto channel = std::make_shared<Channel>();
  rm_->OnHello("slurm.100.n1", Hello("slurm.100.n1"), channel, {});
  // Slurm's SIGTERM reached the agent: the allocation is preempted, once,
  // and never for a Stopping naming another allocation.
  rm_->OnMessage("slurm.100.n1", proto::Stopping{"2.0", "SIGTERM"}, {});
  rm_->OnMessage("slurm.100.n1", proto::Stopping{"1.0", "SIGTERM"}, {});
  rm_->OnMessage("slurm.100.n1", proto::Stopping{"1.0", "SIGTERM"}, {});
  EXPECT_EQ(events_.preempted, (std::vector<std::string>{"1.0"}));
  proto::StateChange stopped{"1.0", 0, proto::ProcessState::kExited, std::nullopt, 15, ""};
  stopped.agent_stopping = true;
  rm_->OnMessage("slurm.100.n1", stopped, {});
  EXPECT_TRUE(events_.states.empty());
  // Slurm shows the job CANCELLED at once; its agent, still connected, may
  // yet report: nothing is lost until it leaves (or the grace is over).
  slurm_.squeue = Squeue({{100, "CANCELLED", "None"}});
  rm_->PollOnce();
  const auto now = std::chrono::steady_clock::now();
  rm_->Tick(now);
  EXPECT_TRUE(events_.lost.empty());
  rm_->OnDisconnected("slurm.100.n1", channel.get(), now);
  rm_->Tick(now + std::chrono::seconds(1));
  ASSERT_EQ(events_.lost.size(), 1u);
  EXPECT_NE(events_.lost[0].second.find("CANCELLED"), std::string::npos);
}

}  // namespace
}  // namespace slurm_rm_test
}  // namespace ring
