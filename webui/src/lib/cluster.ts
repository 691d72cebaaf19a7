// The cluster page's data: a colour per allocation (stable across refreshes),
// what each slot holds, the queue split into running and waiting, and why a
// job waits (on a Slurm pool, in Slurm's words as `ring job list` says it).
import type { Agent, Job, Pool } from '../api/types';
import { PALETTE } from './series';

// The same allocation always gets the same colour, and trials with
// neighbouring ids (a search's trials, side by side in the grid) different ones.
export function allocationColor(allocationId: string): string {
  const [trial, attempt] = allocationId.split('.').map(Number);
  if (Number.isInteger(trial) && Number.isInteger(attempt ?? 0))
    return PALETTE[(trial + 3 * (attempt ?? 0)) % PALETTE.length];
  let h = 2166136261;
  for (let i = 0; i < allocationId.length; i++) {
    h ^= allocationId.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return PALETTE[(h >>> 0) % PALETTE.length];
}

// "12.0" -> 12: an allocation id is "<trial>.<attempt>".
export function trialOfAllocation(allocationId: string): number | null {
  const n = Number(allocationId.split('.')[0]);
  return Number.isInteger(n) && n > 0 ? n : null;
}

export interface SlotView {
  agentId: string;
  slotId: number;
  type: string;
  allocationId: string | null;
  trialId: number | null;
  experimentId: number | null;
  color: string | null;
  label: string;
}

export function slotViews(agent: Agent, jobs: Job[]): SlotView[] {
  const byAlloc = new Map(jobs.map((j) => [j.allocation_id, j]));
  return agent.slots.map((s) => {
    const job = s.allocation_id ? byAlloc.get(s.allocation_id) : undefined;
    const trialId = job?.trial_id ?? (s.allocation_id ? trialOfAllocation(s.allocation_id) : null);
    const label = s.allocation_id
      ? `${agent.id} slot ${s.id} (${s.type}): allocation ${s.allocation_id}` +
        (trialId ? `, trial ${trialId}` : '') +
        (job && job.experiment_id != null ? `, experiment ${job.experiment_id}` : '') +
        (job && job.trial_id == null ? `, ${taskLabel(job)}` : '')
      : `${agent.id} slot ${s.id} (${s.type}): free`;
    return {
      agentId: agent.id,
      slotId: s.id,
      type: s.type,
      allocationId: s.allocation_id,
      trialId,
      experimentId: job?.experiment_id ?? null,
      color: s.allocation_id ? allocationColor(s.allocation_id) : null,
      label,
    };
  });
}

export function slotUsage(agents: Agent[]): { used: number; total: number } {
  let used = 0;
  let total = 0;
  for (const a of agents)
    for (const s of a.slots) {
      total += 1;
      if (s.allocation_id) used += 1;
    }
  return { used, total };
}

// A task that is not a trial as the queue names it: "command 12".
export function taskLabel(job: Job): string {
  return `${job.kind.toLowerCase()} ${job.task_id}`;
}

export function splitQueue(jobs: Job[]): { running: Job[]; pending: Job[] } {
  return {
    running: jobs.filter((j) => j.position === null),
    pending: jobs.filter((j) => j.position !== null),
  };
}

// Why a job waits, as the master words it for `ring job list` and this page
// alike (on a Slurm pool, Slurm's reason); older masters: pending_reason.
export function whyWaiting(job: Job): string {
  return job.why_waiting ?? job.pending_reason ?? (job.preempting ? 'being preempted' : 'running');
}

// "Slurm job 12 (RUNNING)" for a job on a Slurm pool; null elsewhere.
export function slurmJobOf(job: Job): string | null {
  if (job.slurm_job_id === undefined || job.slurm_job_id === null) return null;
  return `Slurm job ${job.slurm_job_id}${job.slurm_state ? ` (${job.slurm_state})` : ''}`;
}

// Whose Unix account runs a pool's tasks, and on a Slurm pool whether the
// safe-sharing rule holds (docs/slurm.md).
export function identityOf(pool: Pool): { text: string; shared: boolean } {
  if (pool.task_identity === 'owner') return { text: 'Slurm partition · tasks run as their owners', shared: false };
  if (pool.task_identity === 'single')
    return {
      text: 'Slurm partition · single identity: every task runs as the master’s account, so users’ trials here can read each other’s files',
      shared: true,
    };
  return { text: 'agents · each agent says whose account runs its tasks', shared: false };
}
