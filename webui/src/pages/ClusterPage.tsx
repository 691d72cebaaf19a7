// The cluster: pools with their policy and use, every agent with its slots
// drawn as a grid coloured by the allocation holding each slot, and the job
// queue with the reason each waiting job waits (the master's sentence, the
// one `ring job list` shows; on a Slurm pool also the job's Slurm id and state).
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { queries } from '../api/queries';
import type { Agent, Job, Pool } from '../api/types';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { ProgressBar } from '../components/ProgressBar';
import { SlotGrid } from '../components/SlotGrid';
import { StateBadge } from '../components/StateBadge';
import { useNow } from '../hooks/useNow';
import { allocationColor, identityOf, slotUsage, slurmJobOf, splitQueue, taskLabel, whyWaiting } from '../lib/cluster';
import { formatAgo, formatDateTime } from '../lib/format';
import { Link } from 'react-router';
import { paths } from '../paths';

export function ClusterPage() {
  const agents = useQuery(queries.agents());
  const jobs = useQuery(queries.jobs());
  const pools = useQuery(queries.pools());
  useEffect(() => {
    document.title = 'Cluster · Ringmaster';
  }, []);
  const usage = agents.data ? slotUsage(agents.data.agents) : null;
  return (
    <section aria-labelledby="cluster-title">
      <div className="page-head">
        <h1 id="cluster-title">Cluster</h1>
        {usage && (
          <p className="muted">
            {usage.used} of {usage.total} slots in use on {agents.data!.agents.length}{' '}
            {agents.data!.agents.length === 1 ? 'agent' : 'agents'}
          </p>
        )}
      </div>
      <StaleNotice error={agents.data ? (agents.error ?? jobs.error) : undefined} />
      <section className="panel" aria-labelledby="pools-title">
        <h2 id="pools-title">Resource pools</h2>
        {pools.isPending && <Loading what="pools" />}
        {!pools.data && pools.error && (
          <ErrorMessage what="pools" error={pools.error} onRetry={() => void pools.refetch()} />
        )}
        {pools.data && <Pools pools={pools.data.pools} />}
      </section>
      <section className="panel" aria-labelledby="agents-title">
        <h2 id="agents-title">Agents and slots</h2>
        {agents.isPending && <Loading what="agents" />}
        {!agents.data && agents.error && (
          <ErrorMessage what="agents" error={agents.error} onRetry={() => void agents.refetch()} />
        )}
        {agents.data && <Agents agents={agents.data.agents} jobs={jobs.data?.jobs ?? []} />}
      </section>
      <section className="panel" aria-labelledby="queue-title">
        <h2 id="queue-title">Job queue</h2>
        {jobs.isPending && <Loading what="the job queue" />}
        {!jobs.data && jobs.error && (
          <ErrorMessage what="the job queue" error={jobs.error} onRetry={() => void jobs.refetch()} />
        )}
        {jobs.data && <Queue jobs={jobs.data.jobs} />}
      </section>
    </section>
  );
}

function Pools({ pools }: { pools: Pool[] }) {
  if (pools.length === 0) return <Empty title="No pools." />;
  return (
    <ul className="cards">
      {pools.map((p) => (
        <li key={p.name} className="card" data-pool={p.name}>
          <h3>{p.name}</h3>
          {p.description && <p className="muted small">{p.description}</p>}
          <p className="small">
            {p.configured ? (
              <>
                {p.scheduler === 'fair_share' ? 'Fair share' : 'Priority'} scheduling, {p.fitting_policy} fit,
                preemption {p.preemption ? 'on' : 'off'}
              </>
            ) : (
              <>Not in master.yaml: agents joined it by name</>
            )}
          </p>
          <p className={identityOf(p).shared ? 'small warning' : 'muted small'} data-identity={p.task_identity}>
            {identityOf(p).text}
          </p>
          <ProgressBar value={p.slots ? p.slots_used / p.slots : 0} label={`Slots in use in pool ${p.name}`} />
          <p className="small">
            {p.slots_used}/{p.slots} slots · {p.agents_connected}/{p.agents} agents connected · {p.jobs_running}{' '}
            running, {p.jobs_pending} waiting
          </p>
        </li>
      ))}
    </ul>
  );
}

// "podman 4.3.1, docker 28.2.2 (rootless)", or "none".
function runtimesOf(a: Agent): string {
  const list = a.container_runtimes ?? [];
  if (list.length === 0) return 'none';
  return list.map((r) => `${r.name} ${r.version}${r.rootless ? ' (rootless)' : ''}`).join(', ');
}

function Agents({ agents, jobs }: { agents: Agent[]; jobs: Job[] }) {
  const now = useNow(5000);
  if (agents.length === 0)
    return (
      <Empty title="No agents have connected.">
        Start one with <code>build/bin/ringagent --master URL --cpu-slots 2</code>.
      </Empty>
    );
  const holders = new Map<string, Job>();
  for (const a of agents)
    for (const s of a.slots)
      if (s.allocation_id)
        holders.set(
          s.allocation_id,
          jobs.find((j) => j.allocation_id === s.allocation_id)!,
        );
  return (
    <>
      <ul className="cards agents">
        {agents.map((a) => (
          <li key={a.id} className="card" data-agent={a.id}>
            <div className="card-head">
              <h3>{a.id}</h3>
              <StateBadge state={a.state} />
            </div>
            <p className="muted small">
              pool {a.pool} · {a.address || 'no address'} ·{' '}
              <span
                title={
                  a.runs_as_owner
                    ? 'runs each task as its owner’s Unix account'
                    : 'runs every task as the agent’s own user'
                }
              >
                {a.runs_as_owner ? 'runs tasks as their owners' : 'single-user'}
              </span>{' '}
              · <span title="container runtimes for trials with environment.image">containers: {runtimesOf(a)}</span> ·
              seen {formatAgo(a.last_seen_at, now)}
              {!a.enabled && (a.draining ? ' · disabled, draining' : ' · disabled')}
            </p>
            <SlotGrid agent={a} jobs={jobs} />
          </li>
        ))}
      </ul>
      {holders.size > 0 && (
        <ul className="legend" aria-label="Allocations holding slots">
          {Array.from(holders.entries()).map(([id, job]) => (
            <li key={id}>
              <span className="swatch" style={{ background: allocationColor(id) }} aria-hidden="true" />
              allocation {id}
              {job && job.trial_id != null && job.experiment_id != null && (
                <>
                  {' '}
                  · <Link to={paths.trial(job.trial_id)}>trial {job.trial_id}</Link> of{' '}
                  <Link to={paths.experiment(job.experiment_id)}>experiment {job.experiment_id}</Link>
                </>
              )}
              {job && job.trial_id == null && <> · {taskLabel(job)}</>}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function Queue({ jobs }: { jobs: Job[] }) {
  if (jobs.length === 0) return <Empty title="The queue is empty.">Nothing is running or waiting.</Empty>;
  const { running, pending } = splitQueue(jobs);
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Job queue">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Pool</th>
            <th scope="col" className="col-num">
              #
            </th>
            <th scope="col">Allocation</th>
            <th scope="col">Task</th>
            <th scope="col">Experiment</th>
            <th scope="col">Owner</th>
            <th scope="col">State</th>
            <th scope="col" className="col-num">
              Slots
            </th>
            <th scope="col" className="col-num">
              Priority
            </th>
            <th scope="col">Queued</th>
            <th scope="col">Why it waits</th>
          </tr>
        </thead>
        <tbody>
          {[...running, ...pending].map((j) => (
            <tr key={j.allocation_id} data-allocation={j.allocation_id}>
              <td>{j.pool}</td>
              <td className="col-num">{j.position ?? '—'}</td>
              <td>
                <span className="swatch" style={{ background: allocationColor(j.allocation_id) }} aria-hidden="true" />{' '}
                {j.allocation_id}
              </td>
              <td>
                {j.trial_id != null ? <Link to={paths.trial(j.trial_id)}>trial {j.trial_id}</Link> : taskLabel(j)}
              </td>
              <td>
                {j.experiment_id != null ? <Link to={paths.experiment(j.experiment_id)}>{j.experiment_id}</Link> : '—'}
              </td>
              <td>{j.private ? <span className="muted">another user’s (private)</span> : j.owner}</td>
              <td>
                <StateBadge state={j.preempting ? 'TERMINATING' : j.state} />
                {slurmJobOf(j) && <div className="muted small">{slurmJobOf(j)}</div>}
              </td>
              <td className="col-num">{j.slots}</td>
              <td className="col-num">{j.priority}</td>
              <td title={formatDateTime(j.queued_at)}>{formatDateTime(j.queued_at)}</td>
              <td className="reason">{whyWaiting(j)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
