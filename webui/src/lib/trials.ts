// Sorting the trials table, by a fixed column or a hyperparameter.
import type { Trial } from '../api/types';
import { flattenHparams } from './hparams';

export type TrialSortKey = 'id' | 'state' | 'best' | 'batches' | 'restarts' | `hp:${string}`;

// Two cell values in ascending order: numbers by value, anything else as text.
export function compareValues(a: unknown, b: unknown): number {
  const an = a === undefined || a === null;
  const bn = b === undefined || b === null;
  if (an || bn) return an === bn ? 0 : an ? 1 : -1; // missing values last
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(typeof a === 'object' ? JSON.stringify(a) : a).localeCompare(
    String(typeof b === 'object' ? JSON.stringify(b) : b),
  );
}

export function sortTrials(trials: Trial[], key: TrialSortKey, order: 'asc' | 'desc'): Trial[] {
  const value = (t: Trial): unknown => {
    if (key === 'id') return t.id;
    if (key === 'state') return t.state;
    if (key === 'best') return t.best_validation;
    if (key === 'batches') return t.total_batches;
    if (key === 'restarts') return t.restarts;
    return flattenHparams(t.hparams)[key.slice(3)];
  };
  const sign = order === 'asc' ? 1 : -1;
  return [...trials].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const missingA = va === undefined || va === null;
    const missingB = vb === undefined || vb === null;
    if (missingA !== missingB) return missingA ? 1 : -1; // missing last in both orders
    return sign * compareValues(va, vb) || a.id - b.id;
  });
}
