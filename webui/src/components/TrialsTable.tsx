// The trials of an experiment: hyperparameters the search varied as
// columns (the constant ones listed below), state, best metric, batches and
// restarts; sortable; the best trial marked; a trial still running can be
// killed by the experiment's owner or an admin, and one with a checkpoint
// continued (ContinueTrial).
import { useMemo, useState } from 'react';
import { useSession } from '../auth/session';
import { isTerminal, mayChange } from '../lib/experiments';
import { ContinueTrial } from './ContinueTrial';
import { KillTrialButton } from './KillTrialButton';
import type { Experiment, Trial } from '../api/types';
import { formatCount, formatMetric, formatValue } from '../lib/format';
import { bestTrial, flattenHparams, hparamColumns } from '../lib/hparams';
import { sortTrials, type TrialSortKey } from '../lib/trials';
import { Link } from 'react-router';
import { paths } from '../paths';
import { Empty } from './DataState';
import { SortHeader } from './SortHeader';
import { StateBadge } from './StateBadge';

export function TrialsTable({ experiment, trials }: { experiment: Experiment; trials: Trial[] }) {
  const [sort, setSort] = useState<{ key: TrialSortKey; order: 'asc' | 'desc' }>({ key: 'id', order: 'asc' });
  const columns = useMemo(() => hparamColumns(trials), [trials]);
  const varying = columns.filter((c) => c.varies);
  const constants = columns.filter((c) => !c.varies);
  const shownCols = varying.length ? varying : constants;
  const sorted = useMemo(() => sortTrials(trials, sort.key, sort.order), [trials, sort]);
  const best = bestTrial(trials, experiment.searcher?.smaller_is_better ?? true);
  const { session } = useSession();
  const mine = mayChange(session, experiment);
  const canKill = mine && trials.some((t) => !isTerminal(t.state));
  const canContinue = trials.some((t) => t.latest_checkpoint);
  const actions = canKill || canContinue;
  if (trials.length === 0)
    return <Empty title="No trials yet.">The searcher creates them once the experiment is active.</Empty>;
  const sortProps = (key: TrialSortKey) => ({
    active: sort.key === key,
    order: sort.order,
    onSort: () =>
      setSort((s) => (s.key === key ? { key, order: s.order === 'asc' ? 'desc' : 'asc' } : { key, order: 'asc' })),
  });
  const first = trials[0] ? flattenHparams(trials[0].hparams) : {};
  return (
    <>
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Trials table">
        <table className="table">
          <thead>
            <tr>
              <SortHeader label="Trial" {...sortProps('id')} className="col-num" />
              <SortHeader label="State" {...sortProps('state')} />
              {shownCols.map((c) => (
                <SortHeader key={c.name} label={c.name} {...sortProps(`hp:${c.name}`)} className="col-hp" />
              ))}
              <SortHeader
                label={`Best ${experiment.searcher?.metric ?? 'metric'}`}
                {...sortProps('best')}
                className="col-num"
              />
              <SortHeader label="Batches" {...sortProps('batches')} className="col-num" />
              <SortHeader label="Restarts" {...sortProps('restarts')} className="col-num" />
              {actions && (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {sorted.map((t) => {
              const hp = flattenHparams(t.hparams);
              const isBest = best?.id === t.id;
              return (
                <tr key={t.id} className={isBest ? 'row-best' : undefined} data-trial={t.id}>
                  <td className="col-num">
                    <Link to={paths.trial(t.id)}>{t.id}</Link>
                    {isBest && (
                      <span className="best-mark" title="best trial">
                        {' '}
                        ★<span className="sr-only"> best trial</span>
                      </span>
                    )}
                  </td>
                  <td>
                    <StateBadge state={t.state} />
                    {t.log_signal && (
                      <>
                        {' '}
                        <span className="badge badge-error" title="a log policy matched a line of this trial">
                          {t.log_signal}
                        </span>
                      </>
                    )}
                  </td>
                  {shownCols.map((c) => (
                    <td key={c.name} className="col-hp">
                      {formatValue(hp[c.name])}
                    </td>
                  ))}
                  <td className="col-num">{formatMetric(t.best_validation)}</td>
                  <td className="col-num">{formatCount(t.total_batches)}</td>
                  <td className="col-num">{t.restarts}</td>
                  {actions && (
                    <td>
                      <span className="row-actions">
                        {t.latest_checkpoint && <ContinueTrial trial={t} experiment={experiment} small />}
                        {canKill && !isTerminal(t.state) && (
                          <KillTrialButton trialId={t.id} experimentId={experiment.id} />
                        )}
                      </span>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {varying.length > 0 && constants.length > 0 && (
        <p className="muted small">
          Same in every trial: {constants.map((c) => `${c.name} = ${formatValue(first[c.name])}`).join(', ')}
        </p>
      )}
    </>
  );
}
