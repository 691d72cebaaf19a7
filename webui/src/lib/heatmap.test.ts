// @vitest-environment node
import { describe, expect, it } from 'vitest';
import {
  DARK_TEXT,
  LIGHT_TEXT,
  RAMP,
  binIndex,
  colorScale,
  contrast,
  defaultPair,
  goodness,
  heatAxis,
  heatColor,
  heatGrid,
  rampColor,
  textOn,
} from './heatmap';

describe('heat map axes', () => {
  it('keeps few distinct numbers as they are, sorted', () => {
    const axis = heatAxis('bs', [64, 16, 32, 16, undefined, null]);
    expect(axis.kind).toBe('value');
    expect(axis.bins.map((b) => b.label)).toEqual(['16', '32', '64']);
    expect(binIndex(axis, 32)).toBe(1);
    expect(binIndex(axis, 48)).toBeNull();
    expect(binIndex(axis, undefined)).toBeNull();
    expect(binIndex(axis, '32')).toBeNull();
  });

  it('bins many distinct numbers into at most ten equal bins, each value in one', () => {
    const values = Array.from({ length: 40 }, (_, i) => i * 2.5); // 0 .. 97.5
    const axis = heatAxis('momentum', values);
    expect(axis.kind).toBe('binned');
    expect(axis.log).toBe(false);
    expect(axis.bins).toHaveLength(10);
    expect(axis.bins[0].lo).toBe(0);
    expect(axis.bins[9].hi).toBe(97.5);
    expect(axis.bins[1].lo).toBeCloseTo(9.75);
    expect(binIndex(axis, 0)).toBe(0);
    expect(binIndex(axis, 9.7)).toBe(0);
    expect(binIndex(axis, 9.8)).toBe(1);
    expect(binIndex(axis, 97.5)).toBe(9); // the last bin holds the maximum
    expect(binIndex(axis, 98)).toBeNull();
    const counts = new Array(10).fill(0);
    for (const v of values) counts[binIndex(axis, v)!] += 1;
    expect(counts).toEqual([4, 4, 4, 4, 4, 4, 4, 4, 4, 4]);
    expect(heatAxis('m', values, 4).bins).toHaveLength(4);
  });

  it('bins on a log scale when the numbers span decades', () => {
    const values = Array.from({ length: 12 }, (_, i) => 10 ** (-5 + (i * 4) / 11)); // 1e-5 .. 0.1
    const axis = heatAxis('lr', values);
    expect(axis.kind).toBe('binned');
    expect(axis.log).toBe(true);
    expect(axis.bins[0].hi).toBeCloseTo(10 ** -4.6);
    expect(binIndex(axis, 1e-5)).toBe(0);
    expect(binIndex(axis, 1e-3)).toBe(5);
    expect(binIndex(axis, 0.1)).toBe(9);
    expect(axis.bins[0].label).toBe('1e-5–2.512e-5');
  });

  it('takes anything else as sorted categories', () => {
    const axis = heatAxis('opt', ['sgd', 'adam', 'sgd', 3, { a: 1 }]);
    expect(axis.kind).toBe('category');
    expect(axis.bins.map((b) => b.label)).toEqual(['{"a":1}', '3', 'adam', 'sgd']);
    expect(binIndex(axis, 'sgd')).toBe(3);
    expect(binIndex(axis, 3)).toBe(1);
    expect(binIndex(axis, { a: 1 })).toBe(0);
    expect(binIndex(axis, 'rmsprop')).toBeNull();
  });
});

describe('heat map cells', () => {
  const x = heatAxis('lr', [0.1, 0.01]);
  const y = heatAxis('bs', [16, 64]);
  const points = [
    { id: 1, x: 0.01, y: 16, value: 0.5 },
    { id: 2, x: 0.01, y: 16, value: 0.3 },
    { id: 3, x: 0.1, y: 16, value: 0.9 },
    { id: 4, x: 0.1, y: 64, value: 0.2 },
    { id: 5, x: 0.1, y: undefined, value: 0.1 },
  ];

  it('sums up each cell by its best trial in the metric direction, empty cells null', () => {
    const smaller = heatGrid(points, x, y, 'best', true);
    expect(smaller.rows[0][0]).toEqual({ value: 0.3, count: 2, bestId: 2, trialIds: [1, 2] });
    expect(smaller.rows[0][1].value).toBe(0.9);
    expect(smaller.rows[1][0]).toEqual({ value: null, count: 0, bestId: null, trialIds: [] });
    expect(smaller.rows[1][1].bestId).toBe(4);
    expect(smaller.skipped).toBe(1);
    expect([smaller.min, smaller.max]).toEqual([0.2, 0.9]);
    const larger = heatGrid(points, x, y, 'best', false);
    expect(larger.rows[0][0].value).toBe(0.5);
    expect(larger.rows[0][0].bestId).toBe(1);
  });

  it('or by the mean of its trials', () => {
    const grid = heatGrid(points, x, y, 'mean', true);
    expect(grid.rows[0][0].value).toBeCloseTo(0.4);
    expect(grid.rows[0][0].bestId).toBe(2);
    expect(grid.min).toBe(0.2);
  });

  it('has no range when no cell has a trial', () => {
    const grid = heatGrid([], x, y, 'best', true);
    expect([grid.min, grid.max]).toEqual([null, null]);
  });
});

describe('heat map colours', () => {
  it('makes the best value the darkest whichever way the metric improves', () => {
    const smaller = colorScale(0.1, 0.9, true);
    expect(goodness(smaller, 0.1)).toBe(1);
    expect(goodness(smaller, 0.9)).toBe(0);
    expect(heatColor(smaller, 0.1)).toBe(RAMP[RAMP.length - 1]);
    expect(heatColor(smaller, 0.9)).toBe(RAMP[0]);
    const larger = colorScale(0.1, 0.9, false);
    expect(goodness(larger, 0.9)).toBe(1);
    expect(heatColor(larger, 0.9)).toBe(RAMP[RAMP.length - 1]);
    expect(heatColor(larger, 0.1)).toBe(RAMP[0]);
    expect(goodness(larger, 0.5)).toBeCloseTo(0.5);
  });

  it('is logarithmic over decades, and neutral when every cell is the same', () => {
    const scale = colorScale(0.001, 1, true);
    expect(scale.log).toBe(true);
    expect(goodness(scale, 0.0316)).toBeCloseTo(0.5, 2);
    expect(goodness(colorScale(2, 2, true), 2)).toBe(0.5);
  });

  it('interpolates between the ramp colours', () => {
    expect(rampColor(0)).toBe('#f7fbff');
    expect(rampColor(0.5)).toBe('#6baed6');
    expect(rampColor(1)).toBe('#08306b');
    expect(rampColor(0.125)).toBe('#dfebf7');
  });

  it('writes on every colour of the scale in a text colour of WCAG AA contrast', () => {
    for (let g = 0; g <= 1; g += 0.05) {
      const bg = rampColor(g);
      expect(contrast(bg, textOn(bg))).toBeGreaterThanOrEqual(4.5);
    }
    expect(textOn(RAMP[0])).toBe(DARK_TEXT);
    expect(textOn(RAMP[RAMP.length - 1])).toBe(LIGHT_TEXT);
  });
});

describe('heat map defaults', () => {
  it('starts with the two most varied hyperparameters', () => {
    const counts: Record<string, number> = { bs: 2, lr: 4, opt: 3 };
    expect(defaultPair(['bs', 'lr', 'opt'], (n) => counts[n])).toEqual(['lr', 'opt']);
    expect(defaultPair(['lr'], () => 1)).toBeNull();
  });
});
