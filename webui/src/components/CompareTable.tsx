// The compared trials in a table: experiment, trial, state, every
// hyperparameter any of them varies (blank where a trial has none of that
// name; those they share are listed below), the best value of its
// experiment's searcher metric and the latest value of the metric drawn;
// sortable by any column; each row removes its trial.
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import type { Trial } from '../api/types';
import { sortCompared, trialLabel, type ComparedTrial, type CompareSortKey } from '../lib/compare';
import { formatMetric, formatValue } from '../lib/format';
import { flattenHparams, hparamColumns } from '../lib/hparams';
import { paths } from '../paths';
import { SortHeader } from './SortHeader';
import { StateBadge } from './StateBadge';

export function CompareTable({
  rows,
  metric,
  onRemove,
}: {
  rows: ComparedTrial[];
  metric: string | null;
  onRemove: (trialId: number) => void;
}) {
  const [sort, setSort] = useState<{ key: CompareSortKey; order: 'asc' | 'desc' }>({ key: 'experiment', order: 'asc' });
  const trials = useMemo(() => rows.map((r) => r.trial), [rows]);
  const columns = useMemo(() => hparamColumns(trials), [trials]);
  const varying = columns.filter((c) => c.varies);
  const constants = columns.filter((c) => !c.varies);
  const sorted = useMemo(() => sortCompared(rows, sort.key, sort.order), [rows, sort]);
  const sortProps = (key: CompareSortKey) => ({
    active: sort.key === key,
    order: sort.order,
    onSort: () =>
      setSort((s) => (s.key === key ? { key, order: s.order === 'asc' ? 'desc' : 'asc' } : { key, order: 'asc' })),
  });
  const first: Record<string, unknown> = trials[0] ? flattenHparams(trials[0].hparams) : {};
  return (
    <>
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Compared trials">
        <table className="table">
          <thead>
            <tr>
              <SortHeader label="Experiment" {...sortProps('experiment')} />
              <SortHeader label="Trial" {...sortProps('trial')} className="col-num" />
              <SortHeader label="State" {...sortProps('state')} />
              {varying.map((c) => (
                <SortHeader key={c.name} label={c.name} {...sortProps(`hp:${c.name}`)} className="col-hp" />
              ))}
              <SortHeader label="Best searcher metric" {...sortProps('best')} className="col-num" />
              <SortHeader label={`Latest ${metric ?? 'metric'}`} {...sortProps('latest')} className="col-num" />
              <th scope="col">
                <span className="sr-only">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((r) => (
              <CompareRow key={r.trial.id} row={r} hparams={varying.map((c) => c.name)} onRemove={onRemove} />
            ))}
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

function CompareRow({
  row,
  hparams,
  onRemove,
}: {
  row: ComparedTrial;
  hparams: string[];
  onRemove: (trialId: number) => void;
}) {
  const t: Trial = row.trial;
  const hp = flattenHparams(t.hparams);
  const searcher = row.experiment?.searcher;
  return (
    <tr data-trial={t.id} data-experiment={t.experiment_id}>
      <td>
        <span className="swatch" style={{ background: row.color }} aria-hidden="true" />
        <Link to={paths.experiment(t.experiment_id)}>
          {row.experiment ? `${row.experiment.name} #${t.experiment_id}` : `experiment ${t.experiment_id}`}
        </Link>
      </td>
      <td className="col-num">
        <Link to={paths.trial(t.id)} aria-label={trialLabel(t.experiment_id, t.id)}>
          {t.id}
        </Link>
      </td>
      <td>
        <StateBadge state={t.state} />
      </td>
      {hparams.map((name) => (
        <td key={name} className="col-hp">
          {name in hp ? formatValue(hp[name]) : ''}
        </td>
      ))}
      <td className="col-num">
        {formatMetric(t.best_validation)}
        {searcher && t.best_validation !== null && (
          <span className="muted small">
            {' '}
            {searcher.metric} {searcher.smaller_is_better ? '↓' : '↑'}
          </span>
        )}
      </td>
      <td className="col-num">{formatMetric(row.latest)}</td>
      <td>
        <button
          type="button"
          className="btn btn-small"
          aria-label={`Remove trial ${t.id} from the comparison`}
          onClick={() => onRemove(t.id)}
        >
          Remove
        </button>
      </td>
    </tr>
  );
}
