// @vitest-environment node
import { describe, expect, it } from 'vitest';
import type { MetricReport } from '../api/types';
import {
  alignSeries,
  formatTicks,
  logScaleFit,
  metricNamesOf,
  pickMetric,
  pointsPerTrial,
  reportsToSeries,
  seriesColor,
} from './series';

describe('series', () => {
  it('aligns series with different x values on one axis', () => {
    const aligned = alignSeries([
      { x: [100, 200, 300], y: [1, 0.5, 0.25] },
      { x: [150, 300], y: [2, 1] },
    ]);
    expect(aligned[0]).toEqual([100, 150, 200, 300]);
    expect(aligned[1]).toEqual([1, null, 0.5, 0.25]);
    expect(aligned[2]).toEqual([null, 2, null, 1]);
    expect(alignSeries([])).toEqual([[]]);
  });
  it('pulls one metric out of reports, skipping those without it', () => {
    const reports: MetricReport[] = [
      { batches: 50, metrics: { loss: 1, acc: 0.1 } },
      { batches: 100, metrics: { acc: 0.2 } },
      { batches: 150, metrics: { loss: null, acc: 0.3 } },
      { batches: 200, metrics: { loss: 0.5 } },
    ];
    expect(reportsToSeries(reports, 'loss')).toEqual({ x: [50, 200], y: [1, 0.5] });
    expect(metricNamesOf(reports)).toEqual(['acc', 'loss']);
  });
  it('picks the preferred metric that exists', () => {
    expect(pickMetric(['acc', 'loss'], null, 'validation_loss', 'loss')).toBe('loss');
    expect(pickMetric(['acc', 'loss'], 'acc', 'loss')).toBe('acc');
    expect(pickMetric(['b', 'a'])).toBe('b');
    expect(pickMetric([])).toBeNull();
  });
  it('keeps charts of many trials small', () => {
    expect(pointsPerTrial(1)).toBe(1000);
    expect(pointsPerTrial(100)).toBe(200);
    expect(pointsPerTrial(10000)).toBe(50);
    expect(seriesColor(0)).toBe(seriesColor(10));
    expect(seriesColor(0)).not.toBe(seriesColor(1));
  });
});

describe('axis helpers', () => {
  it('labels ticks with the decimals their spacing needs', () => {
    expect(formatTicks([0.009, 0.0092, 0.0094])).toEqual(['0.0090', '0.0092', '0.0094']);
    expect(formatTicks([0, 0.5, 1, 1.5])).toEqual(['0.0', '0.5', '1.0', '1.5']);
    expect(formatTicks([0, 100, 200])).toEqual(['0', '100', '200']);
    expect(formatTicks([0, 2e6, 4e6])).toEqual(['0', '2e+6', '4e+6']);
    expect(formatTicks([0.001, 0.01, 0.1, 1], true)).toEqual(['0.001', '0.01', '0.1', '1']);
    expect(formatTicks([1e-5, 1e-4], true)).toEqual(['1e-5', '1e-4']);
    expect(formatTicks([null, 0.01, 0.1], true)).toEqual(['', '0.01', '0.1']); // uPlot passes nulls on log axes
    expect(formatTicks([null, null])).toEqual(['', '']);
  });
  it('suggests a log scale for positive values spanning decades', () => {
    expect(
      logScaleFit([
        [1, 2],
        [2, 0.01],
        [null, 0.5],
      ]),
    ).toEqual({ possible: true, suggested: true });
    expect(
      logScaleFit([
        [1, 2],
        [2, 1],
      ]),
    ).toEqual({ possible: true, suggested: false });
    expect(
      logScaleFit([
        [1, 2],
        [0.5, -1],
      ]),
    ).toEqual({ possible: false, suggested: false });
    expect(logScaleFit([[]])).toEqual({ possible: false, suggested: false });
  });
});
