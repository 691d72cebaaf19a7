#include "master/lifecycle/rank_events.h"

#include <set>

#include <spdlog/spdlog.h>

namespace ring {
namespace {

std::string DescribeExit(const proto::StateChange& change) {
  if (change.signal) return "killed by signal " + std::to_string(*change.signal);
  std::string text = "exited with code " + std::to_string(change.exit_code.value_or(-1));
  if (!change.message.empty()) text += ": " + change.message;
  return text;
}

bool PlacedOn(const LiveAllocation& alloc, const std::string& node) {
  for (const auto& p : alloc.placements())
    if (p.agent_id == node) return true;
  return false;
}

// Whether `rank` is one of the slots' ranks placed on `node` (ranks go
// placement by placement, one per slot): the only ranks a line from that
// node may be filed under.
bool RankOnNode(const LiveAllocation& alloc, const std::string& node, int rank) {
  int first = 0;
  for (const auto& p : alloc.placements()) {
    const int count = static_cast<int>(p.slot_ids.size());
    if (p.agent_id == node && rank >= first && rank < first + count) return true;
    first += count;
  }
  return false;
}

}  // namespace

RankEvents::RankEvents(Store& store, Allocations& allocations, ExperimentSettings& settings,
                       LogPolicies& log_policies, ResourceManager& rm, LogLimits log_limits,
                       std::chrono::milliseconds heartbeat_timeout)
    : store_(store),
      allocations_(allocations),
      settings_(settings),
      log_policies_(log_policies),
      rm_(rm),
      log_limiter_(log_limits),
      heartbeat_timeout_(heartbeat_timeout) {}

std::chrono::seconds RankEvents::PreemptionTimeout(int64_t experiment_id) {
  const ExperimentConfig* config = settings_.Config(experiment_id);
  return std::chrono::seconds(config ? config->preemption_timeout_s : 3600);
}

void RankEvents::OnRankState(const std::string& node, const proto::StateChange& change) {
  LiveAllocation* found = allocations_.Find(change.allocation_id);
  if (!found || !PlacedOn(*found, node)) return;  // already ended: a late report of a fenced-out allocation
  LiveAllocation& alloc = *found;
  alloc.report_deadline.reset();
  auto& rec = alloc.record;
  auto advance = [&](AllocationState to) {
    if (!CanTransition(rec.state, to)) return;
    rec.state = to;
    if (Status s = store_.UpdateAllocation(rec); !s.ok())
      spdlog::error("[allocations] allocation {}: {}", rec.id, s.message());
  };
  switch (change.state) {
    case proto::ProcessState::kStarting:
      advance(AllocationState::kStarting);
      break;
    case proto::ProcessState::kRunning:
      advance(AllocationState::kRunning);
      spdlog::info("[allocations] allocation {} rank {} running on {}", rec.id, change.rank, node);
      break;
    case proto::ProcessState::kExited: {
      if (!alloc.exited_ranks.insert(change.rank).second) return;  // duplicate report
      const bool failed = change.signal.has_value() || change.exit_code.value_or(1) != 0;
      if (failed && !alloc.failure_code) {
        alloc.failure_code = change.exit_code.value_or(128 + change.signal.value_or(0));
        alloc.failure_detail = "rank " + std::to_string(change.rank) + " " + DescribeExit(change);
        // One failed rank ends the whole gang.
        if (!alloc.stop_cause && alloc.process_count() > 1)
          allocations_.Stop(alloc, EndCause::kGangMemberFailed);
      }
      if (static_cast<int>(alloc.exited_ranks.size()) < alloc.process_count()) break;
      // The master's own reason to stop it comes first; then the first failure.
      if (alloc.stop_cause && *alloc.stop_cause != EndCause::kGangMemberFailed)
        allocations_.End(rec.id, *alloc.stop_cause, std::string(Describe(*alloc.stop_cause)));
      else if (alloc.preemption.cause() == EndCause::kSearcherStopped)
        // Asked to stop by the searcher: its work is over however it exited.
        allocations_.End(rec.id, EndCause::kSearcherStopped,
                         alloc.failure_code
                             ? std::string(Describe(EndCause::kSearcherStopped)) + "; " + alloc.failure_detail
                             : std::string(Describe(EndCause::kSearcherStopped)));
      else if (alloc.failure_code)
        allocations_.End(rec.id, EndCause::kFailed, alloc.failure_detail);
      else
        allocations_.End(rec.id, EndCause::kCompleted, std::string(Describe(EndCause::kCompleted)));
      break;
    }
  }
}

void RankEvents::OnLogs(const std::string& node, const proto::LogBatch& batch) {
  LiveAllocation* alloc = allocations_.Find(batch.allocation_id);
  if (!alloc) return;
  auto key = std::make_pair(batch.allocation_id, batch.rank);
  auto seq = log_seq_.find(key);
  if (seq != log_seq_.end() && batch.seq <= seq->second) return;  // a resent batch
  log_seq_[key] = batch.seq;
  std::vector<LogRecord> lines;
  lines.reserve(batch.lines.size());
  // Other users may read these lines: a token the trial printed is hidden. A
  // line a per-node process's worker prefixed with its rank is that rank's,
  // if that rank runs on the node that sent it: a node cannot file lines
  // under another node's ranks.
  auto rank_of = [&](const proto::LogLine& l) {
    return l.rank && RankOnNode(*alloc, node, *l.rank) ? *l.rank : batch.rank;
  };
  const bool trial = alloc->is_trial();
  for (const auto& l : batch.lines)
    lines.push_back({0, trial ? alloc->trial_id() : 0, batch.allocation_id, rank_of(l), l.stream,
                     allocations_.tokens().Redact(l.line), l.ts_ms, trial ? 0 : alloc->record.task_id});
  // Every line of a trial is matched, also those the rate limit drops.
  if (trial) log_policies_.OnLines(*alloc, node, lines);
  if (trial && on_trial_lines_) on_trial_lines_(alloc->experiment_id, node, lines);
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  lines = log_limiter_.Admit(batch.allocation_id, std::move(lines),
                             std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  if (lines.empty()) return;
  if (Status s = trial ? store_.AddLogs(lines) : store_.AddTaskLogs(lines); !s.ok())
    spdlog::error("[allocations] allocation {}: cannot store logs: {}", batch.allocation_id, s.message());
}

void RankEvents::Forget(const std::string& allocation_id) {
  log_limiter_.Forget(allocation_id);
  for (auto seq = log_seq_.begin(); seq != log_seq_.end();)
    seq = seq->first.first == allocation_id ? log_seq_.erase(seq) : std::next(seq);
}

void RankEvents::OnNodeConnected(const std::string& node, const std::vector<proto::RunningProcess>& running,
                                 SteadyTime now) {
  // Allocations the master placed here that the node does not report must
  // report within one timeout, or they are considered gone.
  std::set<std::string> reported;
  for (const auto& r : running) {
    reported.insert(r.allocation_id);
    const LiveAllocation* alloc = allocations_.Find(r.allocation_id);
    if (alloc && PlacedOn(*alloc, node)) continue;
    // Fenced out: the allocation ended (or moved) while this node was away.
    spdlog::warn("[allocations] node {} still runs allocation {} rank {}, which has ended; killing it", node,
                 r.allocation_id, r.rank);
    rm_.Kill(r.allocation_id, {}, EndCause::kFencedOut, node);
  }
  for (auto& [id, alloc] : allocations_.live()) {
    if (!PlacedOn(alloc, node) || reported.count(id)) continue;
    alloc.report_deadline = now + heartbeat_timeout_;
    std::vector<Placement> here;
    for (const auto& p : alloc.placements())
      if (p.agent_id == node) here.push_back(p);
    rm_.Adopt(id, here, alloc.adopted_processes(), alloc.pool, now);
  }
}

void RankEvents::OnNodeLost(const std::string& node) {
  std::vector<std::string> ended;
  for (const auto& [id, alloc] : allocations_.live())
    if (PlacedOn(alloc, node)) ended.push_back(id);
  for (const auto& id : ended) {
    LiveAllocation* alloc = allocations_.Find(id);
    if (!alloc) continue;
    allocations_.Stop(*alloc, EndCause::kAgentLost);  // stops ranks on the other nodes
    alloc->stop_cause = EndCause::kAgentLost;
    allocations_.End(id, EndCause::kAgentLost, std::string(Describe(EndCause::kAgentLost)));
  }
}

void RankEvents::OnAllocationLost(const std::string& allocation_id, const std::string& why, EndCause cause) {
  LiveAllocation* alloc = allocations_.Find(allocation_id);
  if (!alloc) return;  // ended already
  // A stop the master asked for (a kill, a pause) keeps its cause.
  if (alloc->stop_cause) {
    allocations_.End(allocation_id, *alloc->stop_cause, why);
    return;
  }
  allocations_.Stop(*alloc, cause);
  alloc->stop_cause = cause;
  allocations_.End(allocation_id, cause, why);
}

void RankEvents::OnAllocationPreempted(const std::string& allocation_id, const std::string& why,
                                       SteadyTime now) {
  LiveAllocation* alloc = allocations_.Find(allocation_id);
  if (!alloc) return;
  spdlog::info("[allocations] allocation {}: {}; asking its ranks to checkpoint and exit", allocation_id,
               why);
  allocations_.RequestPreemption(*alloc, EndCause::kPreempted, now, PreemptionTimeout(alloc->experiment_id));
}

void RankEvents::OnNodeEvicted(const std::string& node, SteadyTime now) {
  for (auto& [id, alloc] : allocations_.live())
    if (PlacedOn(alloc, node))
      allocations_.RequestPreemption(alloc, EndCause::kPreempted, now,
                                     PreemptionTimeout(alloc.experiment_id));
}

void RankEvents::Tick(SteadyTime now) {
  std::vector<std::string> unreported;
  std::vector<std::string> overdue;
  for (const auto& [id, alloc] : allocations_.live()) {
    if (alloc.report_deadline && now >= *alloc.report_deadline) unreported.push_back(id);
    if (alloc.preemption.Overdue(now) && !alloc.stop_cause) overdue.push_back(id);
  }
  for (const auto& id : unreported) {
    LiveAllocation* alloc = allocations_.Find(id);
    if (!alloc) continue;
    alloc->stop_cause = EndCause::kAgentRestarted;
    allocations_.End(id, EndCause::kAgentRestarted, std::string(Describe(EndCause::kAgentRestarted)));
  }
  for (const auto& id : overdue) {
    if (LiveAllocation* alloc = allocations_.Find(id)) {
      spdlog::warn("[allocations] allocation {} ignored preemption; killing it", id);
      allocations_.Stop(*alloc, alloc->preemption.cause().value_or(EndCause::kPaused));
    }
  }
}

}  // namespace ring
