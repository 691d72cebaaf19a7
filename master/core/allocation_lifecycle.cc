// ExperimentController: allocations on agents — scheduling, starts, process
// states, logs, agent loss, and what an ended allocation means for its trial.
#include <spdlog/spdlog.h>

#include "master/core/experiment_controller.h"
#include "master/core/rank_order.h"
#include "master/core/tokens.h"

namespace ring {
namespace {

nlohmann::json PlacementsJson(const std::vector<Placement>& placements) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : placements) j.push_back({{"agent_id", p.agent_id}, {"slot_ids", p.slot_ids}});
  return j;
}

std::vector<Placement> PlacementsFromJson(const std::string& text) {
  std::vector<Placement> out;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& p : j) {
    if (!p.is_object() || !p.contains("agent_id")) continue;
    out.push_back({p.value("agent_id", ""), p.value("slot_ids", std::vector<int>{})});
  }
  return out;
}

std::string DescribeExit(const proto::StateChange& change) {
  if (change.signal) return "killed by signal " + std::to_string(*change.signal);
  std::string text = "exited with code " + std::to_string(change.exit_code.value_or(-1));
  if (!change.message.empty()) text += ": " + change.message;
  return text;
}

}  // namespace

Status ExperimentController::Recover(SteadyTime now) {
  std::lock_guard lock(mu_);
  auto live = store_.ListLiveAllocations();
  if (!live.ok()) return live.status();
  for (auto& rec : *live) {
    auto trial = store_.GetTrial(rec.trial_id);
    if (!trial.ok()) return trial.status();
    const ExperimentConfig* config = ConfigLocked(trial->experiment_id);
    LiveAllocation alloc;
    alloc.record = rec;
    alloc.experiment_id = trial->experiment_id;
    alloc.pool = config ? config->resources.resource_pool : "default";
    alloc.world_size = static_cast<int>(rec.slots);
    alloc.placements = PlacementsFromJson(rec.agent_ids_json);
    if (rec.state == AllocationState::kPending) {
      pending_.push_back(rec.id);
    } else {
      // Its agents get one heartbeat timeout to come back and claim it.
      for (const auto& p : alloc.placements) {
        proto::Hello ghost{p.agent_id, alloc.pool, "", "", {}, {}};
        if (!agents_.Find(p.agent_id)) {
          auto& e = agents_.Connect(ghost, nullptr, now);
          e.liveness = AgentLiveness::kDisconnected;
          e.deadline = now + options_.heartbeat_timeout + options_.reconnect_window;
        }
        agents_.Hold(p.agent_id, p.slot_ids, rec.id);
      }
      alloc.master_port = ports_.Acquire(rec.id);
      rendezvous_.Open(rec.id);  // empty: ranks waiting on keys set before the restart time out
    }
    spdlog::info("[controller] recovered allocation {} in state {}", rec.id, ToString(rec.state));
    auto& placed = live_.emplace(rec.id, std::move(alloc)).first->second;
    auto exp = store_.GetExperiment(placed.experiment_id);
    if (exp.ok() && exp->state == RunState::kPaused && !placed.placements.empty())
      RequestPreemptionLocked(placed, now);
  }
  // Searchers come back from their snapshots and catch up with what the
  // trials did meanwhile.
  for (int64_t offset = 0;; offset += 500) {
    auto page = store_.ListExperiments(500, offset);
    if (!page.ok()) return page.status();
    for (const auto& e : page->items)
      if (!IsTerminal(e.state)) ReconcileSearchLocked(e.id);
    if (page->items.size() < 500) break;
  }
  ScheduleLocked();
  return Status::Ok();
}

// One pass per pool of its policy's pure scheduler over the agents, the queue
// (in queue order) and the running allocations; then starts what it assigned
// and asks the victims it chose to checkpoint and stop.
void ExperimentController::ScheduleLocked() {
  std::map<std::string, PoolInput> pools;
  for (auto& view : agents_.AllViews()) pools[view.pool].agents.push_back(std::move(view));
  int64_t seq = 0;
  for (const auto& id : pending_) {
    const auto& alloc = live_.at(id);
    const EffectiveResources r = ResourcesLocked(alloc.experiment_id);
    std::optional<int> max_slots;
    if (r.max_slots) max_slots = static_cast<int>(*r.max_slots);
    pools[alloc.pool].pending.push_back({id, alloc.experiment_id, alloc.world_size,
                                         static_cast<int>(r.priority), r.weight, max_slots, ++seq});
  }
  if (pending_.empty()) {
    pending_reasons_.clear();
    pass_positions_.clear();
    return;
  }
  for (const auto& [id, alloc] : live_) {
    if (alloc.record.state == AllocationState::kPending || alloc.placements.empty()) continue;
    const EffectiveResources r = ResourcesLocked(alloc.experiment_id);
    std::optional<int> max_slots;
    if (r.max_slots) max_slots = static_cast<int>(*r.max_slots);
    RunningAllocation running;
    running.allocation_id = id;
    running.experiment_id = alloc.experiment_id;
    running.slots = alloc.world_size;
    running.priority = static_cast<int>(r.priority);
    running.weight = r.weight;
    running.max_slots = max_slots;
    running.started_seq = alloc.started_seq;
    running.preempting = alloc.preempt_requested || !alloc.stop_reason.empty();
    running.placements = alloc.placements;
    pools[alloc.pool].running.push_back(std::move(running));
  }
  pending_reasons_.clear();
  pass_positions_.clear();
  const auto now = std::chrono::steady_clock::now();
  for (auto& [name, input] : pools) {
    if (input.pending.empty()) continue;
    input.pool = name;
    for (const auto& p : options_.pools) {
      if (p.name != name) continue;
      input.policy.type =
          p.scheduler == "fair_share" ? PoolPolicy::Type::kFairShare : PoolPolicy::Type::kPriority;
      input.policy.preemption = p.preemption;
      input.policy.fit = p.fitting_policy == "worst" ? PoolPolicy::Fit::kWorst : PoolPolicy::Fit::kBest;
    }
    const auto pass_start = std::chrono::steady_clock::now();
    PoolDecision decision = SchedulePool(input);
    if (options_.on_scheduler_pass)
      options_.on_scheduler_pass(
          name, std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_start).count());
    for (const auto& [id, reason] : decision.pending_reasons) pending_reasons_[id] = reason;
    for (size_t i = 0; i < decision.order.size(); ++i)
      pass_positions_[decision.order[i]] = static_cast<int>(i) + 1;
    for (const auto& victim : decision.preempt) {
      auto it = live_.find(victim);
      if (it == live_.end()) continue;
      const auto& why = decision.preempted_for.count(victim) ? decision.preempted_for.at(victim) : "";
      spdlog::info("[scheduler] pool {}: preempting allocation {} to make room for {}", name, victim, why);
      RequestPreemptionLocked(it->second, now, "preempted");
    }
    for (const auto& assignment : decision.assignments) {
      auto it = live_.find(assignment.allocation_id);
      if (it == live_.end()) continue;
      pending_reasons_.erase(assignment.allocation_id);
      StartAllocationLocked(it->second, assignment);
    }
  }
}

void ExperimentController::StartAllocationLocked(LiveAllocation& alloc, const Assignment& assignment) {
  const std::string token = NewToken();
  alloc.placements = assignment.placements;
  OrderPlacementsForRanks(alloc.placements);  // recorded in rank order, so a recovery keeps it
  alloc.record.state = AllocationState::kAssigned;
  alloc.record.token_hash = HashToken(token);
  alloc.record.agent_ids_json = PlacementsJson(alloc.placements).dump();
  if (Status s = store_.UpdateAllocation(alloc.record); !s.ok()) {
    spdlog::error("[controller] allocation {}: cannot record assignment: {}", alloc.record.id, s.message());
    alloc.record.state = AllocationState::kPending;
    alloc.placements.clear();
    return;
  }
  std::erase(pending_, alloc.record.id);
  alloc.started_seq = next_started_seq_++;
  for (const auto& p : alloc.placements) agents_.Hold(p.agent_id, p.slot_ids, alloc.record.id);
  alloc.master_port = ports_.Acquire(alloc.record.id);
  rendezvous_.Open(alloc.record.id);
  SendStartsLocked(alloc, token);
}

void ExperimentController::SendStartsLocked(const LiveAllocation& alloc, const std::string& token) {
  auto trial = store_.GetTrial(alloc.record.trial_id);
  const ExperimentConfig* config = ConfigLocked(alloc.experiment_id);
  if (!trial.ok() || !config) return;
  // Placements are in rank order (OrderPlacementsForRanks): rank 0 runs on the first.
  const AgentEntry* chief = agents_.Find(alloc.placements.front().agent_id);
  int rank = 0;
  for (const auto& p : alloc.placements) {
    AgentEntry* agent = agents_.Find(p.agent_id);
    if (!agent || !agent->channel) {
      rank += static_cast<int>(p.slot_ids.size());  // its ranks keep their numbers; it reports them lost
      continue;
    }
    for (size_t local = 0; local < p.slot_ids.size(); ++local, ++rank) {
      proto::Start start;
      start.allocation_id = alloc.record.id;
      start.allocation_token = token;
      start.trial_id = alloc.record.trial_id;
      start.experiment_id = alloc.experiment_id;
      start.rank = rank;
      start.world_size = alloc.world_size;
      start.local_rank = static_cast<int>(local);
      start.local_world_size = static_cast<int>(p.slot_ids.size());
      start.master_addr = chief && !chief->address.empty() ? chief->address : "127.0.0.1";
      start.master_port = alloc.master_port;
      start.slot_ids = {p.slot_ids[local]};
      start.slot_type = agent->slots.empty() ? "cpu" : agent->slots.front().type;
      start.entrypoint = config->entrypoint;
      start.hparams_json = trial->hparams_json;
      start.environment = config->environment_variables;
      const auto storage = CheckpointStorageLocked(*config);
      start.environment["RING_CHECKPOINT_STORAGE"] = storage.dump();
      if (!trial->latest_checkpoint.empty()) {
        CheckpointRecord ref;
        ref.uuid = trial->latest_checkpoint;
        ref.storage_json = storage.dump();
        if (auto stored = store_.GetCheckpoint(trial->latest_checkpoint); stored.ok()) ref = *stored;
        start.latest_checkpoint = CheckpointDir(ref);
      }
      start.environment["RING_MIN_CHECKPOINT_PERIOD_BATCHES"] =
          std::to_string(config->min_checkpoint_period_batches);
      start.environment["RING_MIN_VALIDATION_PERIOD_BATCHES"] =
          std::to_string(config->min_validation_period_batches);
      start.environment["RING_MAX_LENGTH_BATCHES"] = std::to_string(config->searcher.max_length_batches);
      start.environment["RING_SEARCHER_METRIC"] = config->searcher.metric;
      start.environment["RING_TRIAL_SEED"] = std::to_string(trial->seed);
      start.model_definition_path = "/api/v1/allocations/" + alloc.record.id + "/model_definition";
      agent->channel->Send(proto::Encode(start));
    }
    spdlog::info("[controller] allocation {} started on agent {} slots {}", alloc.record.id, p.agent_id,
                 nlohmann::json(p.slot_ids).dump());
  }
}

void ExperimentController::OnAgentHello(const proto::Hello& hello, std::shared_ptr<AgentChannel> channel,
                                        SteadyTime now) {
  std::lock_guard lock(mu_);
  AgentEntry* previous = agents_.Find(hello.agent_id);
  if (previous && previous->channel && previous->channel != channel)
    previous->channel->Close("replaced by a new connection of the same agent");
  channel->Send(
      proto::Encode(proto::Welcome{options_.heartbeat_interval.count(), options_.heartbeat_timeout.count()}));
  auto& entry = agents_.Connect(hello, std::move(channel), now + options_.heartbeat_timeout);
  // An operator's disable outlives reconnects and master restarts.
  if (auto stored = store_.ListAgents(); stored.ok())
    for (const auto& a : *stored)
      if (a.id == entry.id) {
        entry.enabled = a.enabled;
        entry.draining = a.draining;
      }
  AgentRecord rec{entry.id,     entry.pool,  entry.address, "connected", nlohmann::json(entry.slots).dump(),
                  NowRfc3339(), NowRfc3339()};
  if (Status s = store_.UpsertAgent(rec); !s.ok())
    spdlog::warn("[controller] agent {}: cannot record: {}", entry.id, s.message());
  spdlog::info("[controller] agent {} connected: pool {}, {} slots, {} running", entry.id, entry.pool,
               entry.slots.size(), hello.running.size());

  // Allocations the master placed here that the agent does not report must
  // report within one timeout, or they are considered lost.
  std::set<std::string> running;
  for (const auto& r : hello.running) {
    running.insert(r.allocation_id);
    auto it = live_.find(r.allocation_id);
    bool placed_here = false;
    if (it != live_.end())
      for (const auto& p : it->second.placements) placed_here |= p.agent_id == hello.agent_id;
    if (!placed_here) {
      // Fenced out: the allocation ended (or moved) while this agent was away.
      spdlog::warn("[controller] agent {} still runs allocation {} rank {}, which has ended; killing it",
                   hello.agent_id, r.allocation_id, r.rank);
      entry.channel->Send(
          proto::Encode(proto::Kill{r.allocation_id, options_.kill_grace.count(), "fenced out"}));
    }
  }
  for (auto& [id, alloc] : live_) {
    for (const auto& p : alloc.placements) {
      if (p.agent_id != hello.agent_id || running.count(id)) continue;
      alloc.report_deadline = now + options_.heartbeat_timeout;
      agents_.Hold(p.agent_id, p.slot_ids, id);
    }
  }
  ScheduleLocked();
}

void ExperimentController::OnAgentMessage(const std::string& agent_id, const proto::Message& message,
                                          SteadyTime now) {
  std::lock_guard lock(mu_);
  if (AgentEntry* e = agents_.Find(agent_id); e && e->liveness == AgentLiveness::kConnected) {
    e->deadline = now + options_.heartbeat_timeout;
    e->last_seen_at = NowRfc3339();
  }
  if (const auto* change = std::get_if<proto::StateChange>(&message)) {
    OnProcessStateLocked(agent_id, *change);
  } else if (const auto* logs = std::get_if<proto::LogBatch>(&message)) {
    OnLogsLocked(*logs);
  }
}

void ExperimentController::OnAgentDisconnected(const std::string& agent_id, const AgentChannel* channel,
                                               SteadyTime now) {
  std::lock_guard lock(mu_);
  agents_.Disconnect(agent_id, channel, now + options_.reconnect_window);
  spdlog::info("[controller] agent {} disconnected; lost unless it returns within {} ms", agent_id,
               options_.reconnect_window.count());
}

void ExperimentController::OnProcessStateLocked(const std::string& agent_id,
                                                const proto::StateChange& change) {
  auto it = live_.find(change.allocation_id);
  if (it == live_.end()) return;  // already ended: a late report of a fenced-out allocation
  LiveAllocation& alloc = it->second;
  bool placed_here = false;
  for (const auto& p : alloc.placements) placed_here |= p.agent_id == agent_id;
  if (!placed_here) return;
  alloc.report_deadline.reset();
  auto& rec = alloc.record;
  auto advance = [&](AllocationState to) {
    if (!CanTransition(rec.state, to)) return;
    rec.state = to;
    if (Status s = store_.UpdateAllocation(rec); !s.ok())
      spdlog::error("[controller] allocation {}: {}", rec.id, s.message());
  };
  switch (change.state) {
    case proto::ProcessState::kStarting:
      advance(AllocationState::kStarting);
      break;
    case proto::ProcessState::kRunning:
      advance(AllocationState::kRunning);
      break;
    case proto::ProcessState::kExited: {
      if (!alloc.exited_ranks.insert(change.rank).second) return;  // duplicate report
      const bool failed = change.signal.has_value() || change.exit_code.value_or(1) != 0;
      if (failed && !alloc.failure_code) {
        alloc.failure_code = change.exit_code.value_or(128 + change.signal.value_or(0));
        alloc.failure_detail = "rank " + std::to_string(change.rank) + " " + DescribeExit(change);
        // One failed rank ends the whole gang.
        if (alloc.stop_reason.empty() && alloc.world_size > 1)
          StopAllocationLocked(alloc, "another rank failed");
      }
      if (static_cast<int>(alloc.exited_ranks.size()) >= alloc.world_size) {
        std::string reason = !alloc.stop_reason.empty() && alloc.stop_reason != "another rank failed"
                                 ? alloc.stop_reason
                                 : (alloc.failure_code ? alloc.failure_detail : "exited with code 0");
        EndAllocationLocked(rec.id, reason);
      }
      break;
    }
  }
}

void ExperimentController::OnLogsLocked(const proto::LogBatch& batch) {
  auto it = live_.find(batch.allocation_id);
  if (it == live_.end()) return;
  auto key = std::make_pair(batch.allocation_id, batch.rank);
  auto seq = log_seq_.find(key);
  if (seq != log_seq_.end() && batch.seq <= seq->second) return;  // a resent batch
  log_seq_[key] = batch.seq;
  std::vector<LogRecord> lines;
  lines.reserve(batch.lines.size());
  for (const auto& l : batch.lines)
    lines.push_back(
        {0, it->second.record.trial_id, batch.allocation_id, batch.rank, l.stream, l.line, l.ts_ms});
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  lines = log_limiter_.Admit(batch.allocation_id, std::move(lines),
                             std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  if (lines.empty()) return;
  if (Status s = store_.AddLogs(lines); !s.ok())
    spdlog::error("[controller] allocation {}: cannot store logs: {}", batch.allocation_id, s.message());
}

void ExperimentController::StopAllocationLocked(LiveAllocation& alloc, const std::string& reason) {
  if (alloc.stop_reason.empty()) alloc.stop_reason = reason;
  if (alloc.record.state == AllocationState::kPending) {
    EndAllocationLocked(alloc.record.id, reason);
    return;
  }
  if (CanTransition(alloc.record.state, AllocationState::kTerminating)) {
    alloc.record.state = AllocationState::kTerminating;
    if (Status s = store_.UpdateAllocation(alloc.record); !s.ok())
      spdlog::error("[controller] allocation {}: {}", alloc.record.id, s.message());
  }
  proto::Kill kill{alloc.record.id, options_.kill_grace.count(), reason};
  for (const auto& p : alloc.placements)
    if (AgentEntry* agent = agents_.Find(p.agent_id); agent && agent->channel)
      agent->channel->Send(proto::Encode(kill));
}

void ExperimentController::OnAgentLostLocked(const std::string& agent_id) {
  spdlog::warn("[controller] agent {} lost: not back within the {} ms reconnect window", agent_id,
               options_.reconnect_window.count());
  if (AgentEntry* e = agents_.Find(agent_id)) {
    AgentRecord rec{e->id, e->pool, e->address, "lost", nlohmann::json(e->slots).dump(), "", e->last_seen_at};
    (void)store_.UpsertAgent(rec);
  }
  std::vector<std::string> ended;
  for (auto& [id, alloc] : live_)
    for (const auto& p : alloc.placements)
      if (p.agent_id == agent_id) ended.push_back(id);
  for (const auto& id : ended) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    StopAllocationLocked(it->second, "agent lost");  // stops ranks on the other agents
    it->second.stop_reason = "agent lost";
    it->second.infra_failure = true;
    EndAllocationLocked(id, "agent lost");
  }
}

void ExperimentController::EndAllocationLocked(const std::string& allocation_id,
                                               const std::string& exit_reason) {
  auto it = live_.find(allocation_id);
  if (it == live_.end()) return;
  LiveAllocation& alloc = it->second;
  alloc.record.state = AllocationState::kTerminated;
  alloc.record.exit_reason = exit_reason;
  if (!alloc.invalid_hparams.empty())
    alloc.record.exit_reason = "invalid hyperparameters: " + alloc.invalid_hparams;
  if (alloc.failure_code)
    alloc.record.exit_code = alloc.failure_code;
  else if (exit_reason == "exited with code 0")
    alloc.record.exit_code = 0;
  alloc.record.ended_at = NowRfc3339();
  if (Status s = store_.UpdateAllocation(alloc.record); !s.ok())
    spdlog::error("[controller] allocation {}: cannot record its end: {}", allocation_id, s.message());
  spdlog::info("[controller] allocation {} of trial {} terminated: {}", allocation_id, alloc.record.trial_id,
               exit_reason);
  agents_.Release(allocation_id);
  ports_.Release(allocation_id);
  rendezvous_.Close(allocation_id);  // wakes its waiting reads, which then get 409
  std::erase(pending_, allocation_id);
  log_limiter_.Forget(allocation_id);
  for (auto seq = log_seq_.begin(); seq != log_seq_.end();)
    seq = seq->first.first == allocation_id ? log_seq_.erase(seq) : std::next(seq);
  OnTrialAllocationEndedLocked(alloc);
  live_.erase(allocation_id);
  ScheduleLocked();
}

void ExperimentController::OnTrialAllocationEndedLocked(LiveAllocation& alloc) {
  auto trial = store_.GetTrial(alloc.record.trial_id);
  auto exp = store_.GetExperiment(alloc.experiment_id);
  const ExperimentConfig* config = ConfigLocked(alloc.experiment_id);
  if (!trial.ok() || !exp.ok() || !config || IsTerminal(trial->state)) return;
  const bool exited_ok = alloc.record.exit_code == 0 && !alloc.failure_code;
  // A trial that exits 0 after acknowledging preemption stopped early; one
  // that exits 0 unasked (or without acknowledging) finished its work.
  const bool finished =
      exited_ok && !alloc.preempt_acked && (alloc.stop_reason.empty() || alloc.stop_reason == "paused");
  RunState next = trial->state;
  bool requeue = false;
  std::optional<search::ExitReason> exited_early;  // what the searcher hears
  bool closed = false;
  if (exp->state == RunState::kStoppingCanceled || alloc.stop_reason == "killed by user") {
    next = RunState::kCanceled;
    exited_early = search::ExitReason::kCanceled;
  } else if (!alloc.invalid_hparams.empty()) {
    next = RunState::kError;  // no restart helps; the searcher replaces it
    exited_early = search::ExitReason::kInvalidHparams;
  } else if (finished) {
    switch (OnTrialFinishedLocked(*trial, alloc)) {
      case FinishedTrial::kCompleted:
        next = RunState::kCompleted;
        closed = true;
        break;
      case FinishedTrial::kExitedEarly:
        next = RunState::kCompleted;
        exited_early = search::ExitReason::kCanceled;
        spdlog::warn("[controller] trial {} exited 0 without completing its searcher operation", trial->id);
        break;
      case FinishedTrial::kRequeue:
        requeue = exp->state == RunState::kActive;
        break;
      case FinishedTrial::kWaiting:
        break;
    }
    if (auto fresh = store_.GetTrial(trial->id); fresh.ok()) trial = fresh;  // the searcher may have moved it
    if (IsTerminal(trial->state)) return;
  } else if (exp->state == RunState::kPaused || alloc.stop_reason == "paused") {
    next = RunState::kPaused;
  } else if (alloc.infra_failure || (exited_ok && alloc.preempt_acked) || alloc.stop_reason == "preempted") {
    requeue = true;  // not the trial's fault: does not count as a restart
  } else if (trial->restarts < config->max_restarts) {
    ++trial->restarts;
    requeue = true;
    if (options_.on_trial_restart) options_.on_trial_restart();
  } else {
    next = RunState::kError;
    exited_early = search::ExitReason::kErrored;
  }
  trial->state = next;
  if (IsTerminal(next)) trial->ended_at = NowRfc3339();
  if (Status s = store_.UpdateTrial(*trial); !s.ok()) {
    spdlog::error("[controller] trial {}: {}", trial->id, s.message());
    return;
  }
  spdlog::info("[controller] trial {} -> {}{}", trial->id, ToString(next),
               requeue ? " (restart " + std::to_string(trial->restarts) + " of " +
                             std::to_string(config->max_restarts) + ")"
                       : (next == RunState::kActive ? " (waiting for the searcher)" : ""));
  if (requeue) {
    if (Status s = QueueAllocationLocked(*trial, alloc.pool, alloc.world_size); !s.ok())
      spdlog::error("[controller] trial {}: cannot queue a restart: {}", trial->id, s.message());
  }
  if (IsTerminal(next)) CollectCheckpointsLocked(alloc.experiment_id);
  if (ExperimentSearch* search = SearchLocked(alloc.experiment_id); search && (closed || exited_early)) {
    if (auto it = search->request_of.find(trial->id); it != search->request_of.end()) {
      const auto id = it->second;
      if (closed)
        SearchEventLocked(alloc.experiment_id, [id](search::Searcher& s) { return s.TrialClosed(id); });
      else
        SearchEventLocked(alloc.experiment_id,
                          [id, r = *exited_early](search::Searcher& s) { return s.TrialExitedEarly(id, r); });
    }
  }
  FinishExperimentIfDoneLocked(alloc.experiment_id);
}

void ExperimentController::RequestPreemptionLocked(LiveAllocation& alloc, SteadyTime now,
                                                   const std::string& reason) {
  if (alloc.preempt_requested) return;
  alloc.preempt_requested = true;
  alloc.preempt_reason = reason;
  const ExperimentConfig* config = ConfigLocked(alloc.experiment_id);
  const auto timeout = std::chrono::seconds(config ? config->preemption_timeout_s : 3600);
  alloc.preempt_deadline = now + timeout;
  spdlog::info("[controller] allocation {}: asked to checkpoint and exit within {} s ({})", alloc.record.id,
               timeout.count(), reason);
}

void ExperimentController::Tick(SteadyTime now) {
  std::lock_guard lock(mu_);
  for (const auto& agent_id : agents_.ExpireDeadlines(now, options_.reconnect_window))
    OnAgentLostLocked(agent_id);
  std::vector<std::string> unreported;
  std::vector<std::string> overdue;
  for (auto& [id, alloc] : live_) {
    if (alloc.report_deadline && now >= *alloc.report_deadline) unreported.push_back(id);
    if (alloc.preempt_deadline && now >= *alloc.preempt_deadline && alloc.stop_reason.empty())
      overdue.push_back(id);
  }
  for (const auto& id : unreported) {
    auto& alloc = live_.at(id);
    alloc.stop_reason = "agent restarted: the process is gone";
    alloc.infra_failure = true;
    EndAllocationLocked(id, alloc.stop_reason);
  }
  for (const auto& id : overdue) {
    if (auto it = live_.find(id); it != live_.end()) {
      spdlog::warn("[controller] allocation {} ignored preemption; killing it", id);
      StopAllocationLocked(it->second,
                           it->second.preempt_reason.empty() ? "paused" : it->second.preempt_reason);
    }
  }
  ScheduleLocked();
}

}  // namespace ring
