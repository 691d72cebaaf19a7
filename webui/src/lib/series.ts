// Shaping metric data for charts (uPlot wants one shared x array and one y
// array per series, null where a series has no point).
import type { MetricReport, TrialSeries } from '../api/types';

export interface XY {
  x: number[];
  y: (number | null)[];
}

export type Aligned = [number[], ...(number | null)[][]];

// The sorted union of every series' x values, each series' y placed on it.
export function alignSeries(series: XY[]): Aligned {
  const xs = new Set<number>();
  for (const s of series) for (const x of s.x) xs.add(x);
  const x = Array.from(xs).sort((a, b) => a - b);
  const at = new Map<number, number>();
  x.forEach((v, i) => at.set(v, i));
  const ys = series.map((s) => {
    const y: (number | null)[] = new Array(x.length).fill(null);
    s.x.forEach((xv, i) => {
      y[at.get(xv)!] = s.y[i] ?? null;
    });
    return y;
  });
  return [x, ...ys];
}

// One metric of a trial's reports; reports without it are skipped.
export function reportsToSeries(reports: MetricReport[], metric: string): XY {
  const x: number[] = [];
  const y: number[] = [];
  for (const r of reports) {
    const v = r.metrics[metric];
    if (typeof v === 'number' && Number.isFinite(v)) {
      x.push(r.batches);
      y.push(v);
    }
  }
  return { x, y };
}

export function trialSeriesToXY(s: TrialSeries): XY {
  return { x: s.batches, y: s.values };
}

export function metricNamesOf(reports: MetricReport[]): string[] {
  const names = new Set<string>();
  for (const r of reports) for (const [k, v] of Object.entries(r.metrics)) if (typeof v === 'number') names.add(k);
  return Array.from(names).sort();
}

// The first of `preferred` that exists, else the first name, else null.
export function pickMetric(names: string[], ...preferred: (string | null | undefined)[]): string | null {
  for (const p of preferred) if (p && names.includes(p)) return p;
  return names[0] ?? null;
}

// Distinguishable line colours (Tableau 10), in order.
export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
];

export function seriesColor(i: number): string {
  return PALETTE[((i % PALETTE.length) + PALETTE.length) % PALETTE.length];
}

// How many points per trial to ask for, so a chart of many trials stays small.
export function pointsPerTrial(trials: number, budget = 20000): number {
  return Math.max(50, Math.min(1000, Math.floor(budget / Math.max(1, trials))));
}

// Labels of axis ticks with as many decimals as their spacing needs (uPlot's
// own labels repeat "0.01" for ticks 0.0092, 0.0094, ...).
export function formatTicks(splits: (number | null)[], log = false): string[] {
  const finite = splits.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (finite.length === 0) return splits.map(() => '');
  const label = (f: (v: number) => string) =>
    splits.map((v) => (typeof v === 'number' && Number.isFinite(v) ? f(v) : ''));
  const exp = (v: number) => (v === 0 ? '0' : v.toExponential(1).replace('.0e', 'e'));
  const big = Math.max(...finite.map(Math.abs));
  if (log) return label((v) => (Math.abs(v) >= 1e-3 && Math.abs(v) < 1e5 ? String(Number(v.toPrecision(3))) : exp(v)));
  let step = Infinity;
  for (let i = 1; i < finite.length; i++) step = Math.min(step, Math.abs(finite[i] - finite[i - 1]));
  if (!Number.isFinite(step) || step === 0) step = big || 1;
  if (big >= 1e6 || step < 1e-6) return label(exp);
  const digits = Math.min(8, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)));
  return label((v) => v.toFixed(digits));
}

// Whether a log y scale is possible (every value positive) and whether it
// suits the data by default (the values span more than two decades).
export function logScaleFit(aligned: Aligned): { possible: boolean; suggested: boolean } {
  let min = Infinity;
  let max = -Infinity;
  let any = false;
  for (let s = 1; s < aligned.length; s++)
    for (const v of aligned[s]) {
      if (v === null || v === undefined) continue;
      any = true;
      if (v <= 0) return { possible: false, suggested: false };
      if (v < min) min = v;
      if (v > max) max = v;
    }
  return { possible: any, suggested: any && max / min > 100 };
}
