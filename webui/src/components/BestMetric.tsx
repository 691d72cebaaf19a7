// An experiment's best validation metric with its name and direction.
import type { Experiment } from '../api/types';
import { formatMetric } from '../lib/format';

export function BestMetric({ e }: { e: Pick<Experiment, 'best_validation' | 'searcher' | 'best_trial_id'> }) {
  if (e.best_validation === null) return <span className="muted">—</span>;
  const arrow = e.searcher?.smaller_is_better ? '↓' : '↑';
  return (
    <span
      title={`${e.searcher?.metric ?? 'metric'} (${e.searcher?.smaller_is_better ? 'smaller' : 'larger'} is better)`}
    >
      <span className="num">{formatMetric(e.best_validation)}</span>{' '}
      <span className="muted small">
        {e.searcher?.metric} {arrow}
      </span>
    </span>
  );
}
