#include "master/rm/slurmrm/slurm_rm.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "common/thread_role.h"
#include "master/auth/tokens.h"
#include "master/rm/rank_starts.h"
#include "master/rm/slurmrm/slurm_job_script.h"
#include "master/store/store.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

// How long the agents of a job Slurm shows ended may still report (its
// KillWait, 30 s by default, and then some).
constexpr std::chrono::seconds kEndedJobAgentsGrace{120};

// Why a job of ours ended before its ranks reported their exits: squeue's
// last state, or accounting's (sacct) once it left the queue.
std::string DescribeJobEnd(int64_t job_id, const SlurmJob* job) {
  const std::string name = "Slurm job " + std::to_string(job_id);
  if (!job) return name + " left the queue before its ranks reported their exits (no accounting answer)";
  if (job->state == "NODE_FAIL") return name + " lost a node (NODE_FAIL)";
  std::string how = job->state;
  if (job->from_accounting) {
    if (job->exit_code) how += ", exit code " + std::to_string(*job->exit_code);
    if (!job->reason.empty() && job->reason != "None") how += ", reason " + job->reason;
    how += ", as sacct reports it";
  }
  return name + " ended (" + how + ") before its ranks reported their exits";
}

}  // namespace

SlurmRm::SlurmRm(SlurmPoolOptions pool, SlurmRmSettings settings, std::unique_ptr<SlurmCommands> commands,
                 RmEvents& events)
    : pool_(std::move(pool)),
      settings_(std::move(settings)),
      commands_(std::move(commands)),
      events_(events),
      master_url_(settings_.master_url) {}

std::string SlurmRm::master_url() const {
  std::lock_guard lock(mu_);
  return master_url_;
}

void SlurmRm::SetMasterUrl(std::string url) {
  std::lock_guard lock(mu_);
  master_url_ = std::move(url);
}

SlurmRm::~SlurmRm() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SlurmRm::Start() {
  thread_ = std::thread([this] {
    SetThreadName("ring-slurm");
    Loop();
  });
}

void SlurmRm::Enqueue(Work work) {
  work_.push_back(std::move(work));
  wake_.notify_all();
}

void SlurmRm::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    PollOnce();
    lock.lock();
    wake_.wait_for(lock, pool_.poll_interval, [this] { return stopping_ || !work_.empty(); });
  }
}

void SlurmRm::PollOnce() {
  for (;;) {
    Work work;
    {
      std::lock_guard lock(mu_);
      if (work_.empty()) break;
      work = std::move(work_.front());
      work_.pop_front();
    }
    work(*commands_);
  }
  auto sinfo = commands_->SinfoJson();
  Result<std::vector<SlurmNode>> nodes = sinfo.ok() ? ParseSinfoJson(*sinfo) : sinfo.status();
  auto squeue = commands_->SqueueJson(pool_.partition);
  Result<std::vector<SlurmJob>> jobs = squeue.ok() ? ParseSqueueJson(*squeue) : squeue.status();
  if (jobs.ok()) AskAccounting(*jobs);
  bool capacity_changed = false;
  {
    std::lock_guard lock(mu_);
    std::string error;
    if (nodes.ok()) {
      std::vector<SlurmNode> mine;
      for (auto& n : *nodes)
        if (std::find(n.partitions.begin(), n.partitions.end(), pool_.partition) != n.partitions.end())
          mine.push_back(std::move(n));
      auto key = [](const std::vector<SlurmNode>& v) {
        std::string k;
        for (const auto& n : v)
          k += n.name + (n.usable ? "+" : "-") + std::to_string(n.cpus) + std::to_string(n.gpus);
        return k;
      };
      capacity_changed = key(mine) != key(nodes_);
      nodes_ = std::move(mine);
    } else {
      error = nodes.status().message();
    }
    if (jobs.ok()) {
      jobs_.clear();
      for (auto& j : *jobs) jobs_[j.id] = std::move(j);
      ++squeue_generation_;
    } else {
      error = jobs.status().message();
    }
    if (!error.empty() && error != last_poll_error_)
      spdlog::warn("[slurmrm] pool {}: cannot ask Slurm: {}", pool_.pool, error);
    last_poll_error_ = error;
  }
  if (capacity_changed) events_.OnCapacityChanged();
}

void SlurmRm::AskAccounting(std::vector<SlurmJob>& jobs) {
  std::vector<int64_t> missing;
  {
    std::lock_guard lock(mu_);
    std::set<int64_t> listed;
    for (const auto& j : jobs) listed.insert(j.id);
    const uint64_t snapshot = squeue_generation_ + 1;  // `jobs`, once PollOnce counts it
    for (auto& [id, alloc] : allocations_) {
      if (!alloc.job_id || snapshot < alloc.listed_from) continue;
      if (!alloc.looked_for_in) alloc.looked_for_in = snapshot;
      if (!listed.count(alloc.job_id) && !accounted_.count(alloc.job_id)) {
        missing.push_back(alloc.job_id);
        accounted_.insert(alloc.job_id);
      }
    }
  }
  if (missing.empty()) return;
  // Without accounting (no slurmdbd) sacct fails: the job is then "gone
  // from the queue", as squeue alone says.
  auto sacct = commands_->SacctJson(missing);
  auto ended = sacct.ok() ? ParseSacctJson(*sacct) : Result<std::vector<SlurmJob>>(sacct.status());
  if (!ended.ok()) {
    spdlog::info("[slurmrm] pool {}: no accounting answer for jobs that left the queue: {}", pool_.pool,
                 ended.status().message());
    return;
  }
  for (auto& j : *ended)
    if (std::find(missing.begin(), missing.end(), j.id) != missing.end() && SlurmJobEnded(j.state)) {
      jobs.push_back(std::move(j));
    }
}

int SlurmRm::SlotsOf(const SlurmNode& node) const {
  if (pool_.slots_per_node > 0) return static_cast<int>(pool_.slots_per_node);
  return static_cast<int>(pool_.slot_type == SlurmSlotType::kCuda ? node.gpus : node.cpus);
}

std::vector<AgentView> SlurmRm::Offers() const {
  std::lock_guard lock(mu_);
  std::vector<AgentView> views;
  for (const auto& n : nodes_) {
    AgentView v;
    v.id = NodeId(n.name);
    v.pool = pool_.pool;
    v.slot_type = SlotTypeName(pool_.slot_type);
    v.total_slots = SlotsOf(n);
    v.enabled = n.usable;
    if (!pool_.container_runtime.empty()) v.container_runtimes.push_back(pool_.container_runtime);
    auto held = holds_.find(n.name);
    for (int s = 0; s < v.total_slots; ++s)
      if (held == holds_.end() || !held->second.count(s)) v.free_slots.push_back(s);
    views.push_back(std::move(v));
  }
  return views;
}

Status SlurmRm::CheckFits(const ResourcesConfig& resources, const std::vector<std::string>&) const {
  const std::string& pool = resources.resource_pool;
  const int64_t want = resources.slots_per_trial;
  const bool single_node = resources.is_single_node.value_or(false);
  std::lock_guard lock(mu_);
  std::map<int, int> nodes_of_size;
  for (const auto& n : nodes_)
    if (SlotsOf(n) > 0) ++nodes_of_size[SlotsOf(n)];
  if (nodes_of_size.empty()) return Status::Ok();  // sinfo not answered yet
  int largest = 0;
  for (const auto& [size, count] : nodes_of_size) {
    largest = std::max(largest, size);
    if (want <= size || (!single_node && want % size == 0 && want / size <= count)) return Status::Ok();
  }
  if (single_node)
    return Status(ErrorCode::kInvalidConfig,
                  (resources.is_single_node_line > 0
                       ? "experiment.yaml:" + std::to_string(resources.is_single_node_line) + ": "
                       : std::string()) +
                      "resources.is_single_node: a trial of " + std::to_string(want) +
                      " slots must fit on one node, and the largest node of pool " + pool +
                      " (Slurm partition " + pool_.partition + ") has " + std::to_string(largest) + " slots");
  return Status(ErrorCode::kInvalidConfig,
                "resources.slots_per_trial: " + std::to_string(want) + " slots can never be placed in pool " +
                    pool + " (Slurm partition " + pool_.partition + "): its largest node has " +
                    std::to_string(largest) + " slots and a larger trial needs whole nodes adding up to it");
}

Status SlurmRm::CheckContainers(const std::string& pool, const std::string& runtime) const {
  const std::string& declared = pool_.container_runtime;
  if (declared.empty())
    return Status(ErrorCode::kInvalidConfig,
                  "pool " + pool + " runs its trials as Slurm jobs (partition " + pool_.partition +
                      ") and declares no container runtime: set resource_pools[].resource_manager."
                      "container_runtime in master.yaml to the runtime its nodes have, remove "
                      "environment.image, or choose another pool with resources.resource_pool");
  if (!runtime.empty() && runtime != declared)
    return Status(ErrorCode::kInvalidConfig, "pool " + pool + " runs containers with " + runtime +
                                                 " and its Slurm nodes have " + declared +
                                                 " (resource_manager.container_runtime in master.yaml)");
  return Status::Ok();
}

void SlurmRm::Launch(const LaunchSpec& spec) {
  if (spec.placements.empty()) return;
  SbatchJob job;
  job.allocation_id = spec.allocation_id;
  job.credential = NewToken();
  job.run_as = spec.run_as;
  {
    std::lock_guard lock(mu_);
    Allocation alloc;
    alloc.spec = spec;
    bool whole = true;
    for (size_t i = 0; i < spec.placements.size(); ++i) {
      const auto& p = spec.placements[i];
      const std::string node = p.agent_id.substr(pool_.pool.size() + 1);
      alloc.nodes.push_back(node);
      for (int s : p.slot_ids) holds_[node][s] = spec.allocation_id;
      alloc.ranks += ProcessesOn(spec, i);
      const auto known =
          std::find_if(nodes_.begin(), nodes_.end(), [&](const SlurmNode& n) { return n.name == node; });
      if (known == nodes_.end() || static_cast<int>(p.slot_ids.size()) < SlotsOf(*known)) whole = false;
    }
    alloc.grant = {spec.allocation_id, HashToken(job.credential), alloc.nodes};
    job.folder = settings_.job_dir + "/" + spec.allocation_id;
    SlurmJobRequest request;
    request.allocation_id = spec.allocation_id;
    request.nodes = alloc.nodes;
    request.slots_per_node = static_cast<int>(spec.placements.front().slot_ids.size());
    request.whole_nodes = whole;
    request.priority = spec.priority;
    job.args = SbatchArgs(pool_, request);
    // Through slurmrestd the job has no folder: the credential travels in
    // its environment, which only its owner and Slurm can read.
    job.script = BatchScript({pool_.agent_binary, master_url_, spec.allocation_id,
                              pool_.uses_rest() ? "" : job.folder + "/credential", settings_.ca_file,
                              pool_.container_runtime});
    job.container_runtime = pool_.container_runtime;
    allocations_[spec.allocation_id] = std::move(alloc);
  }
  Submit(std::move(job));
}

void SlurmRm::Submit(SbatchJob job) {
  std::lock_guard lock(mu_);
  Enqueue([this, job = std::move(job)](SlurmCommands& slurm) {
    const std::string& allocation_id = job.allocation_id;
    Result<int64_t> submitted = slurm.Sbatch(job);
    std::lock_guard lock(mu_);
    auto it = allocations_.find(allocation_id);
    if (!submitted.ok()) {
      spdlog::warn("[slurmrm] allocation {}: cannot submit its Slurm job: {}", allocation_id,
                   submitted.status().message());
      if (it != allocations_.end()) it->second.submit_error = submitted.status().message();
      return;
    }
    spdlog::info("[slurmrm] allocation {} is Slurm job {} (partition {})", allocation_id, *submitted,
                 pool_.partition);
    if (it == allocations_.end()) {  // released while sbatch ran
      Enqueue([id = *submitted](SlurmCommands& s) { (void)s.Scancel(id); });
      return;
    }
    it->second.job_id = *submitted;
    it->second.view.job_id = *submitted;
    if (settings_.store) {
      const SlurmJobRecord record{allocation_id,
                                  *submitted,
                                  pool_.pool,
                                  it->second.grant.credential_hash,
                                  it->second.spec.launch == LaunchMode::kPerNode,
                                  ""};
      if (Status s = settings_.store->PutSlurmJob(record); !s.ok())
        spdlog::warn("[slurmrm] allocation {}: cannot record its Slurm job: {}", allocation_id, s.message());
    }
    it->second.view.state = "PENDING";
    // The next snapshot is taken after sbatch answered, on this thread.
    it->second.listed_from = squeue_generation_ + 1;
    if (it->second.cancel_now) Cancel(allocation_id, *submitted);
  });
}

void SlurmRm::Cancel(const std::string& allocation_id, int64_t job_id) {
  auto it = allocations_.find(allocation_id);
  if (it != allocations_.end()) {
    if (it->second.cancelled) return;
    it->second.cancelled = true;
  }
  spdlog::info("[slurmrm] allocation {}: scancel {}", allocation_id, job_id);
  Enqueue([job_id](SlurmCommands& slurm) {
    if (Status s = slurm.Scancel(job_id); !s.ok()) spdlog::warn("[slurmrm] {}", s.message());
  });
}

void SlurmRm::Adopt(const std::string& allocation_id, const std::vector<Placement>& placements, int,
                    const std::string&, SteadyTime deadline) {
  // After a master restart: the job runs on, and its agents reconnect with
  // the credential whose hash was stored at launch. Without a stored job
  // (the master stopped before sbatch answered) the allocation is lost.
  Result<SlurmJobRecord> stored = settings_.store ? settings_.store->GetSlurmJob(allocation_id)
                                                  : Result<SlurmJobRecord>(NotFound("no store"));
  std::lock_guard lock(mu_);
  Allocation alloc;
  alloc.spec.allocation_id = allocation_id;
  alloc.spec.placements = placements;
  alloc.spec.launch = stored.ok() && stored->per_node ? LaunchMode::kPerNode : LaunchMode::kPerSlot;
  for (size_t i = 0; i < placements.size(); ++i) {
    const auto& p = placements[i];
    if (!OwnsNode(p.agent_id)) continue;
    const std::string node = p.agent_id.substr(pool_.pool.size() + 1);
    alloc.nodes.push_back(node);
    for (int s : p.slot_ids) holds_[node][s] = allocation_id;
    alloc.ranks += ProcessesOn(alloc.spec, i);
  }
  alloc.started = true;  // its ranks were started before the restart
  alloc.reattach_by = deadline;
  if (stored.ok()) {
    alloc.job_id = stored->job_id;
    alloc.view.job_id = stored->job_id;
    alloc.grant = {allocation_id, stored->credential_hash, alloc.nodes};
    // The job was submitted before the master started: the next snapshot
    // must list it, and one that does not asks sacct how it ended while the
    // master was down.
    alloc.listed_from = squeue_generation_ + 1;
    spdlog::info("[slurmrm] allocation {}: waiting for the agents of Slurm job {} to come back",
                 allocation_id, stored->job_id);
  } else {
    alloc.unknown_job = "the master restarted before it knew the allocation's Slurm job";
  }
  allocations_[allocation_id] = std::move(alloc);
}

void SlurmRm::Kill(const std::string& allocation_id, const std::vector<Placement>&, EndCause why,
                   const std::string& node) {
  const std::string frame =
      proto::Encode(proto::Kill{allocation_id, settings_.kill_grace.count(), std::string(Describe(why))});
  std::lock_guard lock(mu_);
  auto it = allocations_.find(allocation_id);
  if (it == allocations_.end()) return;
  Allocation& alloc = it->second;
  bool any_agent = false;
  for (auto& [name, agent] : alloc.agents) {
    if (!agent.channel || (!node.empty() && NodeId(name) != node)) continue;
    agent.channel->Send(frame);
    any_agent = true;
  }
  if (!node.empty()) return;
  if (!any_agent || !alloc.started) {
    // Nothing runs yet: the job goes at once.
    alloc.cancel_now = true;
    if (alloc.job_id) Cancel(allocation_id, alloc.job_id);
    return;
  }
  // The ranks get the kill grace (SIGTERM, then SIGKILL by the agents);
  // whatever is left of the job after it is cancelled.
  if (!alloc.cancel_at)
    alloc.cancel_at = std::chrono::steady_clock::now() + settings_.kill_grace + std::chrono::seconds(5);
}

void SlurmRm::Release(const std::string& allocation_id) {
  std::lock_guard lock(mu_);
  for (auto& [node, slots] : holds_)
    for (auto s = slots.begin(); s != slots.end();)
      s = s->second == allocation_id ? slots.erase(s) : std::next(s);
  auto it = allocations_.find(allocation_id);
  if (it == allocations_.end()) return;
  Allocation& alloc = it->second;
  accounted_.erase(alloc.job_id);
  if (alloc.job_id) {
    auto job = jobs_.find(alloc.job_id);
    if (job == jobs_.end() || !SlurmJobEnded(job->second.state)) Cancel(allocation_id, alloc.job_id);
  }
  // The credential is void from now on; the job's output stays for a look.
  const std::string credential = settings_.job_dir + "/" + allocation_id + "/credential";
  Enqueue([this, credential, allocation_id](SlurmCommands&) {
    std::error_code ec;
    fs::remove(credential, ec);
    if (settings_.store)
      if (Status s = settings_.store->DeleteSlurmJob(allocation_id); !s.ok())
        spdlog::warn("[slurmrm] allocation {}: {}", allocation_id, s.message());
  });
  allocations_.erase(it);
}

void SlurmRm::Tick(SteadyTime now) {
  struct Ended {
    std::string allocation_id, why;
    bool never_started = false;  // a fault of the job's setup: the attempt fails
  };
  std::vector<Ended> ended;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, alloc] : allocations_) {
      if (alloc.lost_reported) continue;
      if (!alloc.submit_error.empty() || !alloc.unknown_job.empty()) {
        const bool refused = !alloc.submit_error.empty();
        ended.push_back(
            {id, refused ? "Slurm refused the job: " + alloc.submit_error : alloc.unknown_job, refused});
        alloc.lost_reported = true;
        continue;
      }
      if (!alloc.job_id || !alloc.looked_for_in || alloc.looked_for_in > squeue_generation_) continue;
      auto job = jobs_.find(alloc.job_id);
      const bool gone = job == jobs_.end() || SlurmJobEnded(job->second.state);
      if (job != jobs_.end()) {
        alloc.view.state = job->second.state;
        alloc.view.reason = job->second.state == "PENDING" ? job->second.reason : "";
      }
      if (gone) {
        if (static_cast<int>(alloc.exited.size()) >= alloc.ranks) continue;  // its ranks reported
        // Slurm shows a cancelled job ended at once, while its processes
        // still have KillWait to leave: an agent still connected reports its
        // ranks' exits (a trial that checkpointed on the signal) and leaves.
        if (!alloc.ended_seen) alloc.ended_seen = now;
        const bool agents_left = std::none_of(alloc.agents.begin(), alloc.agents.end(),
                                              [](const auto& a) { return a.second.channel != nullptr; });
        if (!agents_left && now - *alloc.ended_seen < kEndedJobAgentsGrace) continue;
        // The batch script ended by itself before any agent of the job said
        // hello: the agents cannot start there (see the job's output).
        const bool script_ended = job != jobs_.end() && !alloc.started && alloc.agents.empty() &&
                                  (job->second.state == "FAILED" || job->second.state == "COMPLETED");
        ended.push_back({id,
                         script_ended
                             ? DescribeJobEnd(alloc.job_id, &job->second) +
                                   "; no agent of it connected: see " + settings_.job_dir + "/" + id +
                                   "/slurm-" + std::to_string(alloc.job_id) + ".out"
                             : DescribeJobEnd(alloc.job_id, job == jobs_.end() ? nullptr : &job->second),
                         script_ended});
        alloc.lost_reported = true;
        continue;
      }
      if (alloc.reattach_by && now >= *alloc.reattach_by) {
        ended.push_back({id,
                         "the agents of Slurm job " + std::to_string(alloc.job_id) +
                             " did not come back after the master restarted",
                         false});
        alloc.lost_reported = true;
        Cancel(id, alloc.job_id);
        continue;
      }
      if (job->second.state == "RUNNING" && !alloc.running_since) alloc.running_since = now;
      if (alloc.running_since && !alloc.started && now - *alloc.running_since > pool_.agent_connect_timeout) {
        ended.push_back({id,
                         "the agents of Slurm job " + std::to_string(alloc.job_id) +
                             " did not connect within " +
                             std::to_string(pool_.agent_connect_timeout.count()) + " ms",
                         true});
        alloc.lost_reported = true;
        Cancel(id, alloc.job_id);
        continue;
      }
      if (alloc.cancel_at && now >= *alloc.cancel_at) Cancel(id, alloc.job_id);
    }
  }
  for (const auto& e : ended) {
    spdlog::warn("[slurmrm] allocation {}: {}", e.allocation_id, e.why);
    if (e.never_started)
      events_.OnAllocationNeverStarted(e.allocation_id, e.why);
    else
      events_.OnAllocationLost(e.allocation_id, e.why);
  }
}

bool SlurmRm::OwnsAllocation(const std::string& allocation_id) const {
  std::lock_guard lock(mu_);
  return allocations_.count(allocation_id) > 0;
}

bool SlurmRm::OwnsJob(int64_t job_id) const {
  std::lock_guard lock(mu_);
  return const_cast<SlurmRm*>(this)->FindByJob(job_id) != nullptr;
}

std::optional<SlurmGrantView> SlurmRm::GrantFor(const std::string& allocation_id,
                                                std::string_view credential) const {
  std::lock_guard lock(mu_);
  auto it = allocations_.find(allocation_id);
  if (it == allocations_.end() || it->second.grant.credential_hash.empty()) {
    (void)TokenMatches(credential, HashToken(""));  // the same work either way
    return std::nullopt;
  }
  if (!TokenMatches(credential, it->second.grant.credential_hash)) return std::nullopt;
  return SlurmGrantView{allocation_id, pool_.pool, it->second.nodes, it->second.spec.run_as};
}

std::optional<SlurmJobView> SlurmRm::Job(const std::string& allocation_id) const {
  std::lock_guard lock(mu_);
  auto it = allocations_.find(allocation_id);
  if (it == allocations_.end()) return std::nullopt;
  return it->second.view;
}

SlurmRm::Allocation* SlurmRm::FindByJob(int64_t job_id) {
  for (auto& [id, alloc] : allocations_)
    if (alloc.job_id == job_id) return &alloc;
  return nullptr;
}

}  // namespace ring
