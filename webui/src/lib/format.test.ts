// @vitest-environment node
import { describe, expect, it } from 'vitest';
import {
  durationBetween,
  formatAgo,
  formatBytes,
  formatDuration,
  formatMetric,
  formatPercent,
  formatValue,
  stateLabel,
} from './format';

describe('format', () => {
  it('shows metrics with four significant digits', () => {
    expect(formatMetric(0.123456)).toBe('0.1235');
    expect(formatMetric(12345.678)).toBe('12350');
    expect(formatMetric(0)).toBe('0');
    expect(formatMetric(0.00001234)).toBe('1.234e-5');
    expect(formatMetric(2e7)).toBe('2e+7');
    expect(formatMetric(null)).toBe('—');
  });
  it('shows hyperparameters of any type', () => {
    expect(formatValue(32)).toBe('32');
    expect(formatValue(0.001)).toBe('0.001');
    expect(formatValue('adam')).toBe('adam');
    expect(formatValue(true)).toBe('true');
    expect(formatValue([1, 2])).toBe('[1,2]');
    expect(formatValue(undefined)).toBe('—');
  });
  it('shows durations coarsely', () => {
    expect(formatDuration(12_400)).toBe('12s');
    expect(formatDuration(185_000)).toBe('3m 05s');
    expect(formatDuration(3_720_000)).toBe('1h 02m');
    expect(formatDuration(26 * 3600_000)).toBe('1d 2h');
    expect(formatDuration(-1)).toBe('—');
    const start = '2026-03-01T10:00:00.000Z';
    expect(durationBetween(start, '2026-03-01T10:00:42.000Z')).toBe('42s');
    expect(durationBetween(start, null, Date.parse('2026-03-01T10:02:00.000Z'))).toBe('2m 00s');
    expect(formatAgo(start, Date.parse('2026-03-01T12:30:00.000Z'))).toBe('2h ago');
    expect(formatAgo(start, Date.parse(start) + 1000)).toBe('just now');
  });
  it('shows sizes, percentages and states', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(50 * 1024 * 1024)).toBe('50 MiB');
    expect(formatPercent(0.456)).toBe('46%');
    expect(formatPercent(1.5)).toBe('100%');
    expect(stateLabel('STOPPING_COMPLETED')).toBe('Stopping (completed)');
    expect(stateLabel('ACTIVE')).toBe('Active');
  });
});
