// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { trial } from '../test/fixtures';
import { sortTrials } from './trials';

describe('sortTrials', () => {
  const trials = [
    trial(1, { lr: 0.1, opt: 'sgd' }, 0.5),
    trial(2, { lr: 0.01, opt: 'adam' }, null),
    trial(3, { lr: 1, opt: 'adam' }, 0.2),
  ];
  it('sorts by metric with missing values last either way', () => {
    expect(sortTrials(trials, 'best', 'asc').map((t) => t.id)).toEqual([3, 1, 2]);
    expect(sortTrials(trials, 'best', 'desc').map((t) => t.id)).toEqual([1, 3, 2]);
  });
  it('sorts by a hyperparameter, numbers and strings', () => {
    expect(sortTrials(trials, 'hp:lr', 'asc').map((t) => t.id)).toEqual([2, 1, 3]);
    expect(sortTrials(trials, 'hp:opt', 'asc').map((t) => t.id)).toEqual([2, 3, 1]);
    expect(sortTrials(trials, 'id', 'desc').map((t) => t.id)).toEqual([3, 2, 1]);
  });
});
