// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { trial } from '../test/fixtures';
import { axisFor, axisTicks, bestTrial, flattenHparams, hparamColumns, position } from './hparams';

describe('hyperparameters', () => {
  it('flattens nested maps to dotted names', () => {
    expect(flattenHparams({ lr: 0.1, optimizer: { name: 'sgd', momentum: 0.9 }, layers: [1, 2] })).toEqual({
      lr: 0.1,
      'optimizer.name': 'sgd',
      'optimizer.momentum': 0.9,
      layers: [1, 2],
    });
  });
  it('puts what the search varied first', () => {
    const trials = [trial(1, { lr: 0.1, bs: 32, opt: 'sgd' }, 1), trial(2, { lr: 0.01, bs: 32, opt: 'adam' }, 2)];
    expect(hparamColumns(trials)).toEqual([
      { name: 'lr', varies: true, numeric: true },
      { name: 'opt', varies: true, numeric: false },
      { name: 'bs', varies: false, numeric: true },
    ]);
  });
  it('finds the best trial in either direction', () => {
    const trials = [trial(1, {}, 0.5), trial(2, {}, 0.2), trial(3, {}, null), trial(4, {}, 0.9)];
    expect(bestTrial(trials, true)?.id).toBe(2);
    expect(bestTrial(trials, false)?.id).toBe(4);
    expect(bestTrial([trial(1, {}, null)], true)).toBeNull();
  });
  it('chooses log, linear or category axes', () => {
    const log = axisFor('lr', [0.001, 0.01, 0.3]);
    expect(log.kind).toBe('log');
    expect(position(log, 0.001)).toBe(0);
    expect(position(log, 0.3)).toBeCloseTo(1);
    expect(position(log, Math.sqrt(0.001 * 0.3))).toBeCloseTo(0.5);
    const lin = axisFor('m', [0, 0.45, 0.9]);
    expect(lin.kind).toBe('linear');
    expect(position(lin, 0.45)).toBeCloseTo(0.5);
    const cat = axisFor('opt', ['sgd', 'adam', 'sgd']);
    expect(cat.kind).toBe('category');
    expect(cat.categories).toEqual(['adam', 'sgd']);
    expect(position(cat, 'sgd')).toBe(1);
    expect(position(cat, 'rmsprop')).toBeNull();
    expect(position(axisFor('c', [5, 5]), 5)).toBe(0.5);
    expect(position(lin, undefined)).toBeNull();
    expect(axisTicks(lin, 3).map((t) => t.value)).toEqual([0, 0.45, 0.9]);
    expect(axisTicks(cat).map((t) => t.value)).toEqual(['adam', 'sgd']);
  });
});
