// A heat map of a metric over two hyperparameters: each axis is the distinct
// values of one (numbers sorted; numbers with more distinct values than fit
// put in at most `maxBins` equal bins, on a log scale when they span
// decades), each cell the trials whose values fall in it, summed up by the
// best or the mean of their metric, and coloured so that darker is better
// whichever way the metric improves.
import { formatMetric, formatValue } from './format';

export const MAX_BINS = 10;

export interface HeatBin {
  label: string;
  // A bin of numbers covers [lo, hi) (the last one [lo, hi]); a distinct
  // value has lo = hi; a category has neither.
  lo?: number;
  hi?: number;
}

export interface HeatAxis {
  name: string;
  kind: 'category' | 'value' | 'binned';
  log: boolean; // binned on a log scale
  bins: HeatBin[];
}

const keyOf = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const present = (v: unknown) => v !== undefined && v !== null;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

// A log scale suits positive numbers spanning more than two decades (as the
// hyperparameter axes, lib/hparams.ts).
function spansDecades(min: number, max: number): boolean {
  return min > 0 && max / min > 100;
}

export function heatAxis(name: string, values: unknown[], maxBins = MAX_BINS): HeatAxis {
  const shown = values.filter(present);
  if (shown.length > 0 && shown.every(isNumber)) {
    const distinct = Array.from(new Set(shown as number[])).sort((a, b) => a - b);
    if (distinct.length <= maxBins)
      return { name, kind: 'value', log: false, bins: distinct.map((v) => ({ label: formatValue(v), lo: v, hi: v })) };
    const min = distinct[0];
    const max = distinct[distinct.length - 1];
    const log = spansDecades(min, max);
    const to = (v: number) => (log ? Math.log(v) : v);
    const from = (t: number) => (log ? Math.exp(t) : t);
    const step = (to(max) - to(min)) / maxBins;
    const bins: HeatBin[] = [];
    for (let i = 0; i < maxBins; i++) {
      const lo = i === 0 ? min : from(to(min) + i * step);
      const hi = i === maxBins - 1 ? max : from(to(min) + (i + 1) * step);
      bins.push({ label: `${formatMetric(lo)}–${formatMetric(hi)}`, lo, hi });
    }
    return { name, kind: 'binned', log, bins };
  }
  const categories = Array.from(new Set(shown.map(keyOf))).sort((a, b) => a.localeCompare(b));
  return { name, kind: 'category', log: false, bins: categories.map((label) => ({ label })) };
}

// The bin a value falls in, or null when it has none (absent, or of another
// type than the axis).
export function binIndex(axis: HeatAxis, v: unknown): number | null {
  if (!present(v)) return null;
  if (axis.kind === 'category') {
    const i = axis.bins.findIndex((b) => b.label === keyOf(v));
    return i < 0 ? null : i;
  }
  if (!isNumber(v)) return null;
  if (axis.kind === 'value') {
    const i = axis.bins.findIndex((b) => b.lo === v);
    return i < 0 ? null : i;
  }
  const first = axis.bins[0].lo!;
  const last = axis.bins[axis.bins.length - 1].hi!;
  if (v < first || v > last) return null;
  const to = (x: number) => (axis.log ? Math.log(x) : x);
  const span = to(last) - to(first);
  if (span <= 0) return 0;
  const i = Math.floor(((to(v) - to(first)) / span) * axis.bins.length);
  return Math.min(axis.bins.length - 1, Math.max(0, i));
}

export type Aggregate = 'best' | 'mean';

export interface HeatPoint {
  id: number; // the trial
  x: unknown;
  y: unknown;
  value: number; // its metric
}

export interface HeatCell {
  value: number | null; // null: no trial falls in this cell
  count: number;
  bestId: number | null; // the best trial in it
  trialIds: number[];
}

export interface HeatGrid {
  rows: HeatCell[][]; // [y bin][x bin]
  min: number | null; // of the cells' values
  max: number | null;
  skipped: number; // points without a value on either axis
}

// Every cell of the grid, each summed up by the best (in the metric's
// direction) or the mean of its trials' values.
export function heatGrid(
  points: HeatPoint[],
  xAxis: HeatAxis,
  yAxis: HeatAxis,
  aggregate: Aggregate,
  smallerIsBetter: boolean,
): HeatGrid {
  const rows: HeatCell[][] = yAxis.bins.map(() =>
    xAxis.bins.map(() => ({ value: null, count: 0, bestId: null, trialIds: [] })),
  );
  const sums = yAxis.bins.map(() => xAxis.bins.map(() => 0));
  const best = yAxis.bins.map(() => xAxis.bins.map(() => NaN));
  let skipped = 0;
  for (const p of points) {
    const xi = binIndex(xAxis, p.x);
    const yi = binIndex(yAxis, p.y);
    if (xi === null || yi === null || !isNumber(p.value)) {
      skipped += 1;
      continue;
    }
    const cell = rows[yi][xi];
    cell.count += 1;
    cell.trialIds.push(p.id);
    sums[yi][xi] += p.value;
    const b = best[yi][xi];
    if (Number.isNaN(b) || (smallerIsBetter ? p.value < b : p.value > b)) {
      best[yi][xi] = p.value;
      cell.bestId = p.id;
    }
  }
  let min: number | null = null;
  let max: number | null = null;
  rows.forEach((row, yi) =>
    row.forEach((cell, xi) => {
      if (cell.count === 0) return;
      cell.value = aggregate === 'best' ? best[yi][xi] : sums[yi][xi] / cell.count;
      min = min === null ? cell.value : Math.min(min, cell.value);
      max = max === null ? cell.value : Math.max(max, cell.value);
    }),
  );
  return { rows, min, max, skipped };
}

export interface ColorScale {
  min: number;
  max: number;
  log: boolean;
  smallerIsBetter: boolean;
}

export function colorScale(min: number, max: number, smallerIsBetter: boolean): ColorScale {
  return { min, max, log: spansDecades(min, max), smallerIsBetter };
}

// How good a value is on the scale: 1 the best of the map, 0 the worst
// (0.5 when every cell has the same value).
export function goodness(scale: ColorScale, v: number): number {
  const to = (x: number) => (scale.log ? Math.log(x) : x);
  const span = to(scale.max) - to(scale.min);
  if (!(span > 0)) return 0.5;
  const t = Math.min(1, Math.max(0, (to(v) - to(scale.min)) / span));
  return scale.smallerIsBetter ? 1 - t : t;
}

// Light (worst) to dark blue (best): ColorBrewer's sequential Blues.
export const RAMP = ['#f7fbff', '#c6dbef', '#6baed6', '#2171b5', '#08306b'];

function rgb(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function hex([r, g, b]: number[]): string {
  return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

// The colour of a goodness from 0 (worst) to 1 (best).
export function rampColor(g: number): string {
  const f = Math.min(1, Math.max(0, g)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(f));
  const a = rgb(RAMP[i]);
  const b = rgb(RAMP[i + 1]);
  return hex(a.map((c, k) => c + (b[k] - c) * (f - i)));
}

export function heatColor(scale: ColorScale, v: number): string {
  return rampColor(goodness(scale, v));
}

// WCAG's relative luminance and contrast ratio.
function luminance(color: string): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const [r, g, b] = rgb(color).map(lin);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

export const DARK_TEXT = '#000000';
export const LIGHT_TEXT = '#ffffff';

// The text colour that reads best on a cell's colour (black or white: one of
// the two has a contrast of at least 4.58 on any colour).
export function textOn(background: string): string {
  return contrast(background, DARK_TEXT) >= contrast(background, LIGHT_TEXT) ? DARK_TEXT : LIGHT_TEXT;
}

// The two hyperparameters a heat map starts with: the most varied two.
export function defaultPair(names: string[], distinctCount: (name: string) => number): [string, string] | null {
  if (names.length < 2) return null;
  const ranked = [...names].sort((a, b) => distinctCount(b) - distinctCount(a) || a.localeCompare(b));
  return [ranked[0], ranked[1]];
}
