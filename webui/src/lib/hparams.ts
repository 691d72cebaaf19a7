// Hyperparameters as table columns and plot axes: nested maps flattened to
// dotted names, constants told apart from what the search varied, numeric
// axes (log when the values span decades) and categorical ones.
import type { Hparams, Trial } from '../api/types';

export function flattenHparams(h: Hparams, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(h)) {
    const name = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v))
      Object.assign(out, flattenHparams(v as Hparams, name));
    else out[name] = v;
  }
  return out;
}

export interface HparamColumn {
  name: string;
  varies: boolean; // differs between trials
  numeric: boolean; // every value is a number
}

export function hparamColumns(trials: Trial[]): HparamColumn[] {
  const values = new Map<string, unknown[]>();
  for (const t of trials)
    for (const [k, v] of Object.entries(flattenHparams(t.hparams))) {
      if (!values.has(k)) values.set(k, []);
      values.get(k)!.push(v);
    }
  const cols: HparamColumn[] = [];
  for (const [name, vs] of values) {
    const keys = new Set(vs.map((v) => JSON.stringify(v)));
    cols.push({
      name,
      varies: keys.size > 1 || vs.length < trials.length,
      numeric: vs.every((v) => typeof v === 'number' && Number.isFinite(v)),
    });
  }
  // What the search varied first, then constants; alphabetical within each.
  return cols.sort((a, b) => Number(b.varies) - Number(a.varies) || a.name.localeCompare(b.name));
}

// The best trial by its best validation metric, or null when none has one.
export function bestTrial(trials: Trial[], smallerIsBetter: boolean): Trial | null {
  let best: Trial | null = null;
  for (const t of trials) {
    if (t.best_validation === null || t.best_validation === undefined) continue;
    if (
      !best ||
      (smallerIsBetter ? t.best_validation < best.best_validation! : t.best_validation > best.best_validation!)
    )
      best = t;
  }
  return best;
}

export interface Axis {
  name: string;
  kind: 'linear' | 'log' | 'category';
  min: number;
  max: number;
  categories: string[];
}

// An axis for a set of values: categories for non-numbers, log scale for
// positive numbers spanning more than two decades, else linear.
export function axisFor(name: string, values: unknown[]): Axis {
  const present = values.filter((v) => v !== undefined && v !== null);
  const numbers = present.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (numbers.length === present.length && numbers.length > 0) {
    const min = Math.min(...numbers);
    const max = Math.max(...numbers);
    const log = min > 0 && max / min > 100;
    return { name, kind: log ? 'log' : 'linear', min, max, categories: [] };
  }
  const categories = Array.from(new Set(present.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))))).sort();
  return { name, kind: 'category', min: 0, max: Math.max(0, categories.length - 1), categories };
}

// Where a value sits on an axis, from 0 (min) to 1 (max); null when absent.
export function position(axis: Axis, v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (axis.kind === 'category') {
    const i = axis.categories.indexOf(typeof v === 'string' ? v : JSON.stringify(v));
    if (i < 0) return null;
    return axis.categories.length === 1 ? 0.5 : i / (axis.categories.length - 1);
  }
  if (typeof v !== 'number' || !Number.isFinite(v)) return null;
  if (axis.max === axis.min) return 0.5;
  if (axis.kind === 'log') return (Math.log(v) - Math.log(axis.min)) / (Math.log(axis.max) - Math.log(axis.min));
  return (v - axis.min) / (axis.max - axis.min);
}

// Ticks to label an axis: the categories, or a few values between min and max.
export function axisTicks(axis: Axis, count = 5): { value: unknown; at: number }[] {
  if (axis.kind === 'category') return axis.categories.map((c) => ({ value: c, at: position(axis, c)! }));
  if (axis.min === axis.max) return [{ value: axis.min, at: 0.5 }];
  const out: { value: unknown; at: number }[] = [];
  for (let i = 0; i < count; i++) {
    const f = i / (count - 1);
    const value =
      axis.kind === 'log'
        ? Math.exp(Math.log(axis.min) + f * (Math.log(axis.max) - Math.log(axis.min)))
        : axis.min + f * (axis.max - axis.min);
    out.push({ value, at: f });
  }
  return out;
}
