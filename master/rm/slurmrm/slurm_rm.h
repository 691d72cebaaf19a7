#pragma once
// A resource pool backed by a Slurm partition. Offers are the partition's
// nodes (sinfo) with the slots our allocations do not hold; each launched
// allocation becomes one Slurm job (sbatch) on the nodes the scheduler
// chose, whose batch script starts one ringagent per node in its
// one-allocation mode (`srun`); those job agents connect back with the
// allocation's credential (JobAgentDoor), get that node's ranks once every
// node of the job has said hello, and report states and logs as our own
// agents do. Kill asks the job agents to stop the ranks and cancels the job
// (scancel) after the kill grace; Tick turns job states (squeue) into
// events: a job that ends, is cancelled or loses a node before its ranks
// reported their exits ends its allocation as an infrastructure failure.
//
// Threads: every Slurm command runs on this object's own command thread
// (they wait for slurmctld); its results, the allocations and the job
// agents are guarded by mu_. The ResourceManager calls run on the
// lifecycle's executor and never wait for Slurm; OnMessage runs on an io
// thread and takes only mu_.
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "master/rm/agent_peers.h"
#include "master/rm/agentrm/agent_enrolments.h"
#include "master/rm/agentrm/agent_refusal.h"
#include "master/rm/resource_manager.h"
#include "master/rm/slurmrm/job_agent_admission.h"
#include "master/rm/slurmrm/slurm_commands.h"
#include "master/rm/slurmrm/slurm_options.h"
#include "master/rm/slurmrm/slurm_state.h"

namespace ring {

class Store;

struct SlurmRmSettings {
  std::string master_url;  // how job agents reach the master (the pool's master_url, else the listen address)
  std::string job_dir;     // resolved: scripts, output and credentials of each allocation's job
  std::string ca_file;     // handed to job agents for an https master; empty: none
  std::chrono::milliseconds kill_grace{10000};
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{10000};
  AgentRefusalCounter count_refusal;  // may be empty
  // Where each allocation's job id and credential hash are kept, so that a
  // restarted master reattaches to its jobs (Adopt); null: not kept.
  Store* store = nullptr;
  // Task terminals (master/interactive/terminal_relay.h), as AgentRmOptions
  // has them for our own agents: a job agent's TerminalOutput or
  // TerminalClosed goes to `terminal_message`, which answers whether the
  // session was one the master opened on that job agent; `terminals_gone`
  // hears of a job agent whose connection ended. Empty: no terminals.
  std::function<bool(const std::string& agent_id, const proto::Message& message)> terminal_message;
  std::function<void(const std::string& agent_id)> terminals_gone;
};

// What the master issued one allocation's job, as the submit helper asks
// for it before it submits as the owner (GET /api/v1/slurm/grants/{id}).
struct SlurmGrantView {
  std::string allocation_id;
  std::string pool;
  std::vector<std::string> nodes;      // the job's Slurm nodes, rank order
  std::optional<proto::RunAs> run_as;  // the owner's linked account
};

// The job agent that runs an allocation's ranks on one of its nodes.
struct JobAgentView {
  std::string id;       // slurm.<job>.<node>
  std::string address;  // the address it said hello from
  bool connected = false;
};

// Where one allocation's Slurm job is, for `ring job list`.
struct SlurmJobView {
  int64_t job_id = 0;  // 0 while sbatch has not answered
  std::string state;   // PENDING, RUNNING, ...; after it left the queue, sacct's
  std::string reason;  // Slurm's pending reason
};

class SlurmRm : public ResourceManager, public JobAgentDoor {
 public:
  SlurmRm(SlurmPoolOptions pool, SlurmRmSettings settings, std::unique_ptr<SlurmCommands> commands,
          RmEvents& events);
  ~SlurmRm() override;
  SlurmRm(const SlurmRm&) = delete;
  SlurmRm& operator=(const SlurmRm&) = delete;

  // Starts the command thread (polls every poll_interval); component tests
  // call PollOnce instead.
  void Start();
  // One round on the calling thread: queued submits and cancels, then sinfo
  // and squeue.
  void PollOnce();

  const std::string& pool() const { return pool_.pool; }
  const std::string& partition() const { return pool_.partition; }
  // Where job agents connect; set once before Start when master.yaml does
  // not say (the master's own address is known once it listens).
  std::string master_url() const;
  void SetMasterUrl(std::string url);
  // The scheduler's id of a Slurm node of this pool: "<pool>:<node>".
  std::string NodeId(const std::string& slurm_node) const { return pool_.pool + ":" + slurm_node; }
  bool OwnsNode(const std::string& node_id) const { return node_id.rfind(pool_.pool + ":", 0) == 0; }
  bool OwnsAllocation(const std::string& allocation_id) const;
  bool OwnsJob(int64_t job_id) const;
  std::optional<SlurmJobView> Job(const std::string& allocation_id) const;
  // The live allocation's grant when `credential` is its own; nullopt else
  // (an unknown allocation or another credential: the same answer).
  std::optional<SlurmGrantView> GrantFor(const std::string& allocation_id, std::string_view credential) const;
  // Whether each job runs as its owner's account (a submit helper), or all
  // as the master's (single identity).
  bool RunsAsOwner() const { return !pool_.submit_helper.empty() || pool_.uses_rest(); }
  // The live job agents, shaped like GET /api/v1/agents' entries plus
  // slurm_job_id and allocation_id.
  nlohmann::json AgentsJson() const;
  // The job agent of `allocation_id` on `node_id` (the scheduler's id,
  // "<pool>:<node>"), once it has said hello; nullopt before, or for an
  // allocation or node that is not this pool's.
  std::optional<JobAgentView> JobAgentOn(const std::string& allocation_id, const std::string& node_id) const;
  // Sends `message` on a job agent's live connection (a terminal's:
  // TerminalOpen, Input, Resize, Close); kUnavailable when it has none.
  // Safe on any thread; takes only mu_.
  Status SendToJobAgent(const std::string& agent_id, const proto::Message& message);

  // ResourceManager.
  std::vector<AgentView> Offers() const override;
  Status CheckFits(const ResourcesConfig& resources, const std::vector<std::string>& declared) const override;
  Status CheckContainers(const std::string& pool, const std::string& runtime) const override;
  void Launch(const LaunchSpec& spec) override;
  void Adopt(const std::string& allocation_id, const std::vector<Placement>& placements, int processes,
             const std::string& pool, SteadyTime deadline) override;
  void Kill(const std::string& allocation_id, const std::vector<Placement>& placements, EndCause why,
            const std::string& node = "") override;
  void Release(const std::string& allocation_id) override;
  void Tick(SteadyTime now) override;

  // JobAgentDoor.
  Result<std::string> Authenticate(std::string_view authorization, std::string_view agent_id,
                                   const std::string& peer) override;
  void OnHello(const std::string& agent_id, const proto::Hello& hello, std::shared_ptr<AgentChannel> channel,
               SteadyTime now) override;
  void OnMessage(const std::string& agent_id, const proto::Message& message, SteadyTime now) override;
  void OnDisconnected(const std::string& agent_id, const AgentChannel* channel, SteadyTime now) override;

 private:
  struct JobAgent {
    std::shared_ptr<AgentChannel> channel;  // null while disconnected
    std::string address;
    std::string version;
    std::string connected_at;                                 // RFC 3339
    std::vector<proto::ContainerRuntime> container_runtimes;  // from its hello
  };
  struct Allocation {
    LaunchSpec spec;
    std::vector<std::string> nodes;  // Slurm node names, placement order
    JobGrant grant;
    int64_t job_id = 0;
    // The first squeue snapshot (by number: squeue_generation_ once it is
    // taken) that must list the job, and the first that looked for it
    // (asking sacct when it was missing). Tick judges whether the job left
    // the queue only after one looked, so sacct's answer comes first.
    uint64_t listed_from = 0;
    uint64_t looked_for_in = 0;
    std::string submit_error;  // Slurm refused the job
    std::string unknown_job;   // adopted without a stored job id: why it is lost
    SlurmJobView view;
    std::map<std::string, JobAgent> agents;  // by Slurm node
    bool started = false;                    // the ranks' starts were sent
    std::set<int> exited;                    // ranks that reported their exit
    int ranks = 0;
    std::optional<SteadyTime> running_since;
    std::optional<SteadyTime> reattach_by;  // adopted after a restart: its agents must be back by then
    std::optional<SteadyTime> cancel_at;    // scancel what is left (after a kill's grace)
    bool cancel_now = false;
    bool cancelled = false;
    bool lost_reported = false;
    bool stop_requested = false;           // its job agents said Slurm is stopping the job
    std::optional<SteadyTime> ended_seen;  // squeue first showed the job ended
  };
  using Work = std::function<void(SlurmCommands&)>;

  void Enqueue(Work work);
  void Loop();
  void Submit(SbatchJob job);
  // After squeue: how the jobs of ours that left the queue ended, where the
  // site keeps accounting (sacct), added to `jobs` as their final states.
  void AskAccounting(std::vector<SlurmJob>& jobs);
  void Cancel(const std::string& allocation_id, int64_t job_id);  // mu_ held; queues scancel
  void SendStarts(Allocation& alloc);                             // mu_ held
  void Refuse(AgentRefusal why, const std::string& agent_id, const std::string& what) const;
  Allocation* FindByJob(int64_t job_id);  // mu_ held
  int SlotsOf(const SlurmNode& node) const;

  const SlurmPoolOptions pool_;
  const SlurmRmSettings settings_;
  std::unique_ptr<SlurmCommands> commands_;
  RmEvents& events_;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable wake_;
  std::deque<Work> work_;
  bool stopping_ = false;
  std::string master_url_;
  std::vector<SlurmNode> nodes_;      // of the partition, last sinfo
  std::map<int64_t, SlurmJob> jobs_;  // last squeue, with sacct's answers for ours that left it
  std::set<int64_t> accounted_;       // jobs sacct was asked about (once each)
  uint64_t squeue_generation_ = 0;    // squeue snapshots taken (the last one's number)
  std::string last_poll_error_;
  std::map<std::string, Allocation> allocations_;
  std::map<std::string, std::map<int, std::string>> holds_;  // Slurm node -> slot -> allocation
  std::thread thread_;                                       // last: joined first
};

}  // namespace ring
