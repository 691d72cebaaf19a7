#include "master/rm/slurmrm/slurm_rm.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "master/auth/tokens.h"
#include "master/rm/rank_starts.h"
#include "master/rm/slurmrm/slurm_job_script.h"
#include "master/store/store.h"

namespace ring {
namespace {

namespace fs = std::filesystem;

// Writes `text` to a new file readable (and for a script executable) by
// this account only.
Status WritePrivateFile(const std::string& path, const std::string& text, mode_t mode) {
  std::error_code ec;
  fs::remove(path, ec);
  {
    std::ofstream out(path, std::ios::trunc);
    if (!out) return Internal("cannot write " + path);
    out << text;
    if (!out) return Internal("cannot write " + path);
  }
  if (chmod(path.c_str(), mode) != 0) return Internal("cannot chmod " + path);
  return Status::Ok();
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
  thread_ = std::thread([this] { Loop(); });
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
  auto squeue = commands_->SqueueJson();
  Result<std::vector<SlurmJob>> jobs = squeue.ok() ? ParseSqueueJson(*squeue) : squeue.status();
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
  const std::string credential = NewToken();
  std::vector<std::string> args;
  std::string script, folder;
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
    alloc.grant = {spec.allocation_id, HashToken(credential), alloc.nodes};
    folder = settings_.job_dir + "/" + spec.allocation_id;
    SlurmJobRequest request;
    request.allocation_id = spec.allocation_id;
    request.nodes = alloc.nodes;
    request.slots_per_node = static_cast<int>(spec.placements.front().slot_ids.size());
    request.whole_nodes = whole;
    request.output_path = folder + "/slurm-%j.out";
    args = SbatchArgs(pool_, request);
    script = BatchScript({pool_.agent_binary, master_url_, spec.allocation_id, folder + "/credential",
                          settings_.ca_file, pool_.container_runtime});
    allocations_[spec.allocation_id] = std::move(alloc);
  }
  Submit(spec.allocation_id, script, credential, std::move(args), folder);
}

void SlurmRm::Submit(const std::string& allocation_id, const std::string& script,
                     const std::string& credential, std::vector<std::string> args,
                     const std::string& folder) {
  std::lock_guard lock(mu_);
  Enqueue([this, allocation_id, script, credential, args = std::move(args), folder](SlurmCommands& slurm) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace, ec);
    Status written = ec ? Internal("cannot create " + folder + ": " + ec.message()) : Status::Ok();
    // The credential: readable by the job's user only (docs/security.md).
    if (written.ok()) written = WritePrivateFile(folder + "/credential", credential + "\n", 0600);
    if (written.ok()) written = WritePrivateFile(folder + "/job.sh", script, 0700);
    Result<int64_t> job = written.ok() ? slurm.Sbatch(args, folder + "/job.sh") : Result<int64_t>(written);
    std::lock_guard lock(mu_);
    auto it = allocations_.find(allocation_id);
    if (!job.ok()) {
      spdlog::warn("[slurmrm] allocation {}: cannot submit its Slurm job: {}", allocation_id,
                   job.status().message());
      if (it != allocations_.end()) it->second.submit_error = job.status().message();
      return;
    }
    spdlog::info("[slurmrm] allocation {} is Slurm job {} (partition {})", allocation_id, *job,
                 pool_.partition);
    if (it == allocations_.end()) {  // released while sbatch ran
      Enqueue([job = *job](SlurmCommands& s) { (void)s.Scancel(job); });
      return;
    }
    it->second.job_id = *job;
    it->second.view.job_id = *job;
    if (settings_.store) {
      const SlurmJobRecord record{allocation_id,
                                  *job,
                                  pool_.pool,
                                  it->second.grant.credential_hash,
                                  it->second.spec.launch == LaunchMode::kPerNode,
                                  ""};
      if (Status s = settings_.store->PutSlurmJob(record); !s.ok())
        spdlog::warn("[slurmrm] allocation {}: cannot record its Slurm job: {}", allocation_id, s.message());
    }
    it->second.view.state = "PENDING";
    it->second.submitted_generation = squeue_generation_;
    if (it->second.cancel_now) Cancel(allocation_id, *job);
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

void SlurmRm::Adopt(const std::string& allocation_id, const std::vector<Placement>& placements,
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
    alloc.submitted_generation = squeue_generation_;
    spdlog::info("[slurmrm] allocation {}: waiting for the agents of Slurm job {} to come back",
                 allocation_id, stored->job_id);
  } else {
    alloc.submit_error = "the master restarted before it knew the allocation's Slurm job";
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
  std::vector<std::pair<std::string, std::string>> lost;  // allocation, why
  {
    std::lock_guard lock(mu_);
    for (auto& [id, alloc] : allocations_) {
      if (alloc.lost_reported) continue;
      if (!alloc.submit_error.empty()) {
        lost.emplace_back(id, "Slurm refused the job: " + alloc.submit_error);
        alloc.lost_reported = true;
        continue;
      }
      if (!alloc.job_id || squeue_generation_ <= alloc.submitted_generation) continue;
      auto job = jobs_.find(alloc.job_id);
      const bool gone = job == jobs_.end() || SlurmJobEnded(job->second.state);
      if (job != jobs_.end()) {
        alloc.view.state = job->second.state;
        alloc.view.reason = job->second.state == "PENDING" ? job->second.reason : "";
      }
      if (gone) {
        if (static_cast<int>(alloc.exited.size()) >= alloc.ranks) continue;  // its ranks reported
        const std::string state = job == jobs_.end() ? "gone from the queue" : job->second.state;
        lost.emplace_back(id, state == "NODE_FAIL"
                                  ? "Slurm job " + std::to_string(alloc.job_id) + " lost a node (NODE_FAIL)"
                                  : "Slurm job " + std::to_string(alloc.job_id) + " ended (" + state +
                                        ") before its ranks reported their exits");
        alloc.lost_reported = true;
        continue;
      }
      if (alloc.reattach_by && now >= *alloc.reattach_by) {
        lost.emplace_back(id, "the agents of Slurm job " + std::to_string(alloc.job_id) +
                                  " did not come back after the master restarted");
        alloc.lost_reported = true;
        Cancel(id, alloc.job_id);
        continue;
      }
      if (job->second.state == "RUNNING" && !alloc.running_since) alloc.running_since = now;
      if (alloc.running_since && !alloc.started && now - *alloc.running_since > pool_.agent_connect_timeout) {
        lost.emplace_back(id, "the agents of Slurm job " + std::to_string(alloc.job_id) +
                                  " did not connect within " +
                                  std::to_string(pool_.agent_connect_timeout.count()) + " ms");
        alloc.lost_reported = true;
        Cancel(id, alloc.job_id);
        continue;
      }
      if (alloc.cancel_at && now >= *alloc.cancel_at) Cancel(id, alloc.job_id);
    }
  }
  for (const auto& [id, why] : lost) {
    spdlog::warn("[slurmrm] allocation {}: {}", id, why);
    events_.OnAllocationLost(id, why);
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
