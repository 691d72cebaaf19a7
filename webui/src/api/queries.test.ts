// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { keys, pollEvery } from './queries';

describe('queries', () => {
  it('polls at its pace, slower after each failure in a row, and not at all at 0', () => {
    const every = pollEvery(3000);
    const after = (failures: number) => every({ state: { fetchFailureCount: failures } });
    expect([0, 1, 2, 3, 9].map(after)).toEqual([3000, 6000, 12000, 24000, 30000]);
    expect(pollEvery(0)({ state: { fetchFailureCount: 0 } })).toBe(false);
  });

  it("nests an experiment's keys under it, so one invalidation reaches them all", () => {
    const under = (key: readonly unknown[], prefix: readonly unknown[]) =>
      prefix.every((part, i) => JSON.stringify(part) === JSON.stringify(key[i]));
    for (const key of [
      keys.experimentTrials(4),
      keys.experimentMetrics(4, 'validation', null, 1000, false),
      keys.modelFiles(4),
    ])
      expect(under(key, keys.experiment(4))).toBe(true);
    expect(under(keys.experimentList({ label: 'a' }), keys.experimentLists)).toBe(true);
    expect(under(keys.experiment(4), keys.experimentLists)).toBe(false);
  });
});
