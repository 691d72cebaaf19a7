// The Compare page's state, which lives in its URL (so a comparison can be
// shared): the trials compared, experiments whose trials the page adds (it
// then rewrites the URL to the trials themselves), and the metric drawn.
//   /compare?trials=1,5,9&kind=training&metric=loss
//   /compare?experiments=3,4
// The tab also remembers the trials of its latest comparison, so the
// Compare links of the experiment and trial pages add to it.
import type { Experiment, MetricKind, Trial } from '../api/types';
import { flattenHparams } from './hparams';
import { compareValues } from './trials';

export interface CompareQuery {
  trials: number[];
  experiments: number[];
  kind: MetricKind;
  metric: string | null; // null: the page picks one the trials report
  ignored: string[]; // parts of the id lists that are no ids
}

// Positive integer ids from "1,5, 9" (or spaces), each once, in order.
export function parseIds(text: string | null | undefined): { ids: number[]; ignored: string[] } {
  const ids: number[] = [];
  const ignored: string[] = [];
  for (const part of (text ?? '').split(/[\s,]+/)) {
    if (part === '') continue;
    const n = /^\d{1,15}$/.test(part) ? Number(part) : NaN;
    if (!Number.isSafeInteger(n) || n <= 0) ignored.push(part);
    else if (!ids.includes(n)) ids.push(n);
  }
  return { ids, ignored };
}

export function parseCompareQuery(search: string): CompareQuery {
  const p = new URLSearchParams(search);
  const trials = parseIds(p.get('trials'));
  const experiments = parseIds(p.get('experiments'));
  return {
    trials: trials.ids,
    experiments: experiments.ids,
    kind: p.get('kind') === 'training' ? 'training' : 'validation',
    metric: p.get('metric') || null,
    ignored: [...trials.ignored, ...experiments.ignored],
  };
}

// The URL's query for a comparison; the defaults are left out. Commas stay
// commas, so the link reads as it is typed.
export function compareSearch(q: Partial<Omit<CompareQuery, 'ignored'>>): string {
  const parts: string[] = [];
  if (q.trials?.length) parts.push(`trials=${q.trials.join(',')}`);
  if (q.experiments?.length) parts.push(`experiments=${q.experiments.join(',')}`);
  if (q.kind === 'training') parts.push('kind=training');
  if (q.metric) parts.push(`metric=${encodeURIComponent(q.metric)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

// The ids of `a` then those of `b` not in it.
export function mergeIds(a: readonly number[], b: readonly number[]): number[] {
  const out = [...a];
  for (const id of b) if (!out.includes(id)) out.push(id);
  return out;
}

export function trialLabel(experimentId: number, trialId: number): string {
  return `exp ${experimentId} · trial ${trialId}`;
}

// Every name of several lists, once, sorted.
export function unionNames(lists: readonly (readonly string[])[]): string[] {
  return Array.from(new Set(lists.flat())).sort();
}

const REMEMBERED = 'ring.compare';

export function rememberComparison(trials: readonly number[]): void {
  try {
    if (trials.length) window.sessionStorage.setItem(REMEMBERED, trials.join(','));
    else window.sessionStorage.removeItem(REMEMBERED);
  } catch {
    // Storage may be unavailable (private modes): the links then start anew.
  }
}

export function rememberedComparison(): number[] {
  try {
    return parseIds(window.sessionStorage.getItem(REMEMBERED)).ids;
  } catch {
    return [];
  }
}

// Where the Compare links go: the tab's latest comparison with these trials,
// or these experiments' trials, added.
export function addToComparison(add: { trials?: number[]; experiments?: number[] }): string {
  return compareSearch({ trials: mergeIds(rememberedComparison(), add.trials ?? []), experiments: add.experiments });
}

// A row of the comparison's table: a trial with what the page knows of its
// experiment, its colour in the chart and the latest value of the metric
// drawn.
export interface ComparedTrial {
  trial: Trial;
  experiment: Pick<Experiment, 'id' | 'name' | 'searcher'> | null;
  color: string;
  latest: number | null;
}

export type CompareSortKey = 'experiment' | 'trial' | 'state' | 'best' | 'latest' | `hp:${string}`;

export function sortCompared(rows: ComparedTrial[], key: CompareSortKey, order: 'asc' | 'desc'): ComparedTrial[] {
  const value = (r: ComparedTrial): unknown => {
    if (key === 'experiment') return r.trial.experiment_id;
    if (key === 'trial') return r.trial.id;
    if (key === 'state') return r.trial.state;
    if (key === 'best') return r.trial.best_validation;
    if (key === 'latest') return r.latest;
    return flattenHparams(r.trial.hparams)[key.slice(3)];
  };
  const sign = order === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const missingA = va === undefined || va === null;
    const missingB = vb === undefined || vb === null;
    if (missingA !== missingB) return missingA ? 1 : -1; // missing last in both orders
    return sign * compareValues(va, vb) || a.trial.experiment_id - b.trial.experiment_id || a.trial.id - b.trial.id;
  });
}
