// One trial: hyperparameters, training and validation curves (downsampled on
// the master, so a million-point series draws as fast as a short one),
// checkpoints, every attempt with why it ended, and live logs.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { queries } from '../api/queries';
import { useSession } from '../auth/session';
import { ContinueTrial } from '../components/ContinueTrial';
import { KillTrialButton } from '../components/KillTrialButton';
import type { Allocation, LogPolicyMatch, MetricKind, Trial, TrialMetrics } from '../api/types';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { CheckpointsTable } from '../components/CheckpointsTable';
import { CompareLink } from '../components/CompareLink';
import { RegisterVersion } from '../components/RegisterVersion';
import { LineChart } from '../components/LineChart';
import { LogViewer } from '../components/LogViewer';
import { StateBadge } from '../components/StateBadge';
import { useNow } from '../hooks/useNow';
import { isTerminal, mayChange } from '../lib/experiments';
import { durationBetween, formatCount, formatDateTime, formatMetric, formatValue } from '../lib/format';
import { flattenHparams } from '../lib/hparams';
import { alignSeries, metricNamesOf, pickMetric, reportsToSeries, seriesColor } from '../lib/series';
import { Link } from 'react-router';
import { paths } from '../paths';

const CHART_POINTS = 1000;

export function TrialPage({ id }: { id: number }) {
  const trial = useQuery(queries.trial(id));
  const { session } = useSession();
  const ended = trial.data ? isTerminal(trial.data.state) : false;
  const every = ended ? 15000 : 3000;
  // An ended trial's metrics cannot change: read them once more, then stop
  // (a long series costs the master a full read each time).
  const metricsEvery = ended ? 0 : 3000;
  const experimentId = trial.data?.experiment_id ?? 0;
  const exp = useQuery({ ...queries.experiment(experimentId, 15000), enabled: experimentId > 0 });
  const allocations = useQuery(queries.allocations(id, every));
  const checkpoints = useQuery(queries.checkpoints(id, every));

  useEffect(() => {
    document.title = `Trial ${id} · Ringmaster`;
  }, [id]);

  if (trial.isPending) return <Loading what={`trial ${id}`} />;
  if (!trial.data)
    return <ErrorMessage what={`trial ${id}`} error={trial.error!} onRetry={() => void trial.refetch()} />;
  const t = trial.data;
  const searcherMetric = exp.data?.searcher?.metric;
  const worldSize = allocations.data?.allocations.at(-1)?.slots ?? 0;
  return (
    <section aria-labelledby="trial-title">
      <p className="crumbs">
        <Link to={paths.experiments()}>Experiments</Link> /{' '}
        <Link to={paths.experiment(t.experiment_id)}>
          {exp.data ? `${exp.data.name} #${t.experiment_id}` : `experiment ${t.experiment_id}`}
        </Link>{' '}
        / trial {t.id}
      </p>
      <div className="page-head">
        <div>
          <h1 id="trial-title">Trial {t.id}</h1>
          <div className="head-line">
            <StateBadge state={t.state} />
          </div>
        </div>
        <div className="head-actions">
          <CompareLink trials={[t.id]} label={`Compare trial ${t.id} with other trials`} />
          {exp.data && t.latest_checkpoint && <ContinueTrial trial={t} experiment={exp.data} />}
          {exp.data && !ended && mayChange(session, exp.data) && (
            <KillTrialButton trialId={t.id} experimentId={t.experiment_id} />
          )}
        </div>
      </div>
      <StaleNotice error={trial.error} />
      <TrialFacts t={t} metric={searcherMetric} />
      <section className="panel" aria-labelledby="hp-title">
        <h2 id="hp-title">Hyperparameters</h2>
        <Hparams hparams={t.hparams} />
      </section>
      <div className="chart-pair">
        <MetricChart trialId={id} kind="validation" preferred={searcherMetric} interval={metricsEvery} />
        <MetricChart trialId={id} kind="training" preferred="loss" interval={metricsEvery} />
      </div>
      <section className="panel" aria-labelledby="logs-title">
        <h2 id="logs-title">Logs</h2>
        <LogViewer trialId={id} worldSize={worldSize} />
      </section>
      {t.log_policy_matches && t.log_policy_matches.length > 0 && (
        <section className="panel" aria-labelledby="log-policies-title">
          <h2 id="log-policies-title">Log policy matches</h2>
          <LogPolicyMatches matches={t.log_policy_matches} />
        </section>
      )}
      <section className="panel" aria-labelledby="attempts-title">
        <h2 id="attempts-title">Attempts and restarts</h2>
        {allocations.data ? (
          <Attempts allocations={allocations.data.allocations} />
        ) : allocations.error ? (
          <ErrorMessage what="attempts" error={allocations.error} onRetry={() => void allocations.refetch()} />
        ) : (
          <Loading what="attempts" />
        )}
      </section>
      <section className="panel" aria-labelledby="ckpt-title">
        <h2 id="ckpt-title">Checkpoints</h2>
        {checkpoints.data ? (
          <CheckpointsTable
            checkpoints={checkpoints.data.checkpoints}
            actions={(c) => <RegisterVersion checkpoint={c} />}
          />
        ) : checkpoints.error ? (
          <ErrorMessage what="checkpoints" error={checkpoints.error} onRetry={() => void checkpoints.refetch()} />
        ) : (
          <Loading what="checkpoints" />
        )}
      </section>
    </section>
  );
}

function TrialFacts({ t, metric }: { t: Trial; metric: string | undefined }) {
  const now = useNow();
  return (
    <dl className="facts">
      <div>
        <dt>Best {metric ?? 'validation'}</dt>
        <dd className="num">{formatMetric(t.best_validation)}</dd>
      </div>
      <div>
        <dt>Batches</dt>
        <dd>
          {formatCount(t.total_batches)}
          {t.searcher_operation ? ` of ${formatCount(t.searcher_operation.length)} asked by the searcher` : ''}
        </dd>
      </div>
      <div>
        <dt>Restarts</dt>
        <dd>{t.restarts}</dd>
      </div>
      {t.last_exit_reason && (
        <div>
          <dt>Last exit</dt>
          <dd>{t.last_exit_reason}</dd>
        </div>
      )}
      {t.log_signal && (
        <div>
          <dt>Log signal</dt>
          <dd>
            <span className="badge badge-error">{t.log_signal}</span>
          </dd>
        </div>
      )}
      <div>
        <dt>Started</dt>
        <dd>{formatDateTime(t.created_at)}</dd>
      </div>
      <div>
        <dt>Duration</dt>
        <dd>{durationBetween(t.created_at, t.ended_at, now)}</dd>
      </div>
      <div>
        <dt>Seed</dt>
        <dd>{t.seed}</dd>
      </div>
      {t.continued_in && t.continued_in.length > 0 && (
        <div>
          <dt>Continued</dt>
          <dd>
            <ul className="plain-list">
              {t.continued_in.map((c) => (
                <li key={c.experiment_id}>
                  <Link to={paths.experiment(c.experiment_id)}>Continued in experiment {c.experiment_id}</Link>
                </li>
              ))}
            </ul>
          </dd>
        </div>
      )}
    </dl>
  );
}

function Hparams({ hparams }: { hparams: Trial['hparams'] }) {
  const flat = flattenHparams(hparams);
  const names = Object.keys(flat).sort();
  if (names.length === 0) return <Empty title="This trial has no hyperparameters." />;
  return (
    <dl className="facts hp-list">
      {names.map((n) => (
        <div key={n}>
          <dt>{n}</dt>
          <dd className="num">{formatValue(flat[n])}</dd>
        </div>
      ))}
    </dl>
  );
}

function MetricChart({
  trialId,
  kind,
  preferred,
  interval,
}: {
  trialId: number;
  kind: MetricKind;
  preferred?: string;
  interval: number;
}) {
  const data = useQuery(queries.trialMetrics(trialId, kind, CHART_POINTS, interval <= 0));
  const [chosen, setChosen] = useState<string | null>(null);
  const names = useMemo(() => (data.data ? metricNamesOf(data.data.metrics) : []), [data.data]);
  const metric = pickMetric(names, chosen, preferred, 'loss');
  const title = kind === 'training' ? 'Training' : 'Validation';
  return (
    <section className="panel" aria-labelledby={`${kind}-title`}>
      <div className="panel-head">
        <h2 id={`${kind}-title`}>{title} metrics</h2>
        {names.length > 1 && (
          <label className="inline-field">
            Metric
            <select value={metric ?? ''} onChange={(e) => setChosen(e.target.value)}>
              {names.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {data.isPending && <Loading what={`${kind} metrics`} />}
      {!data.data && data.error && (
        <ErrorMessage what={`${kind} metrics`} error={data.error} onRetry={() => void data.refetch()} />
      )}
      {data.data &&
        (metric ? (
          <MetricPlot kind={kind} metric={metric} metrics={data.data} />
        ) : (
          <Empty title={`No ${kind} metrics yet.`} />
        ))}
    </section>
  );
}

function MetricPlot({ kind, metric, metrics }: { kind: MetricKind; metric: string; metrics: TrialMetrics }) {
  const aligned = useMemo(() => alignSeries([reportsToSeries(metrics.metrics, metric)]), [metrics, metric]);
  const series = useMemo(
    () => [{ label: metric, color: kind === 'training' ? seriesColor(0) : seriesColor(1), width: 2 }],
    [metric, kind],
  );
  return (
    <>
      <LineChart title={`${kind} ${metric} by batches`} data={aligned} series={series} yLabel={metric} height={240} />
      <p className="muted small">
        {metrics.downsampled
          ? `${formatCount(metrics.metrics.length)} of ${formatCount(metrics.total)} reports shown, chosen on the master to keep the curve's shape.`
          : `${formatCount(metrics.total)} reports.`}
      </p>
    </>
  );
}

// What each match did: a label, no more retries, or the node avoided.
const ACTION_TEXT: Record<NonNullable<LogPolicyMatch['action']> | 'none', string> = {
  cancel_retries: 'no more restarts',
  exclude_node: 'avoids this node',
  none: 'label',
};

function LogPolicyMatches({ matches }: { matches: LogPolicyMatch[] }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Log policy matches table">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Policy</th>
            <th scope="col">Action</th>
            <th scope="col">Agent</th>
            <th scope="col">Attempt</th>
            <th scope="col">Line</th>
            <th scope="col">Matched</th>
          </tr>
        </thead>
        <tbody>
          {matches.map((m) => (
            <tr key={`${m.policy}/${m.node}`}>
              <td>{m.policy}</td>
              <td>{ACTION_TEXT[m.action ?? 'none']}</td>
              <td>{m.node}</td>
              <td>
                {m.allocation_id} rank {m.rank}
              </td>
              <td className="log-line">{m.line}</td>
              <td>{formatDateTime(m.matched_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Attempts({ allocations }: { allocations: Allocation[] }) {
  if (allocations.length === 0) return <Empty title="Not scheduled yet." />;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Attempts table">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Attempt</th>
            <th scope="col">State</th>
            <th scope="col" className="col-num">
              Slots
            </th>
            <th scope="col">Agents</th>
            <th scope="col">Exit</th>
            <th scope="col">Started</th>
            <th scope="col">Ended</th>
          </tr>
        </thead>
        <tbody>
          {allocations.map((a) => (
            <tr key={a.id}>
              <td>{a.id}</td>
              <td>
                <StateBadge state={a.state} />
              </td>
              <td className="col-num">{a.slots}</td>
              <td>{placementText(a.placements)}</td>
              <td>{exitText(a)}</td>
              <td>{formatDateTime(a.created_at)}</td>
              <td>{formatDateTime(a.ended_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// Why an attempt ended; its exit code only when the reason does not say it.
export function exitText(a: Pick<Allocation, 'exit_reason' | 'exit_code' | 'state'>): string {
  const code = a.exit_code !== null && a.exit_code !== undefined ? `code ${a.exit_code}` : '';
  if (!a.exit_reason) return code || (a.state === 'TERMINATED' ? '—' : 'running');
  return code && !a.exit_reason.includes(code) ? `${a.exit_reason} (${code})` : a.exit_reason;
}

export function placementText(p: unknown): string {
  if (!Array.isArray(p) || p.length === 0) return '—';
  return p
    .map((x) =>
      typeof x === 'string'
        ? x
        : typeof x === 'object' && x && 'agent_id' in x
          ? String((x as { agent_id: unknown }).agent_id)
          : JSON.stringify(x),
    )
    .join(', ');
}
