import { describe, expect, it } from 'vitest';
import { experiment, trial } from '../test/fixtures';
import {
  addToComparison,
  compareSearch,
  mergeIds,
  parseCompareQuery,
  parseIds,
  rememberComparison,
  rememberedComparison,
  sortCompared,
  trialLabel,
  unionNames,
  type ComparedTrial,
} from './compare';

describe('the Compare URL', () => {
  it('reads trials, experiments, kind and metric', () => {
    expect(parseCompareQuery('?trials=1,5,9&experiments=3&kind=training&metric=val%20acc')).toEqual({
      trials: [1, 5, 9],
      experiments: [3],
      kind: 'training',
      metric: 'val acc',
      ignored: [],
    });
    expect(parseCompareQuery('')).toEqual({
      trials: [],
      experiments: [],
      kind: 'validation',
      metric: null,
      ignored: [],
    });
  });

  it('keeps each id once, in order, and sets aside what is no id', () => {
    expect(parseIds('9, 1,9 x  0 -3 2.5 7')).toEqual({ ids: [9, 1, 7], ignored: ['x', '0', '-3', '2.5'] });
    expect(parseIds('99999999999999999999')).toEqual({ ids: [], ignored: ['99999999999999999999'] });
    expect(parseCompareQuery('?trials=4,abc&kind=other').ignored).toEqual(['abc']);
    expect(parseCompareQuery('?kind=other').kind).toBe('validation');
  });

  it('writes the query back without the defaults, and reads it again the same', () => {
    expect(compareSearch({ trials: [1, 5], kind: 'validation', metric: null })).toBe('?trials=1,5');
    const search = compareSearch({ trials: [2], experiments: [7, 8], kind: 'training', metric: 'a&b' });
    expect(search).toBe('?trials=2&experiments=7,8&kind=training&metric=a%26b');
    expect(parseCompareQuery(search)).toMatchObject({ trials: [2], experiments: [7, 8], metric: 'a&b' });
    expect(compareSearch({})).toBe('');
  });

  it('merges ids and names', () => {
    expect(mergeIds([3, 1], [1, 4, 3, 5])).toEqual([3, 1, 4, 5]);
    expect(unionNames([['loss', 'acc'], ['acc', 'f1'], []])).toEqual(['acc', 'f1', 'loss']);
    expect(trialLabel(2, 17)).toBe('exp 2 · trial 17');
  });

  it("adds to the tab's latest comparison", () => {
    window.sessionStorage.clear();
    expect(addToComparison({ trials: [4] })).toBe('?trials=4');
    rememberComparison([1, 2]);
    expect(rememberedComparison()).toEqual([1, 2]);
    expect(addToComparison({ trials: [2, 4] })).toBe('?trials=1,2,4');
    expect(addToComparison({ experiments: [6] })).toBe('?trials=1,2&experiments=6');
    rememberComparison([]);
    expect(rememberedComparison()).toEqual([]);
  });
});

describe('sorting compared trials', () => {
  const row = (id: number, exp: number, hp: Record<string, unknown>, best: number | null, latest: number | null) =>
    ({
      trial: trial(id, hp, best, { experiment_id: exp }),
      experiment: experiment({ id: exp }),
      color: '#000',
      latest,
    }) as ComparedTrial;
  const rows = [row(5, 2, { lr: 0.1 }, 0.3, 1), row(1, 1, { lr: 0.01 }, null, 3), row(9, 1, {}, 0.1, 2)];
  const ids = (r: ComparedTrial[]) => r.map((x) => x.trial.id);

  it('by experiment then trial, by metrics, and by a hyperparameter with missing values last', () => {
    expect(ids(sortCompared(rows, 'experiment', 'asc'))).toEqual([1, 9, 5]);
    expect(ids(sortCompared(rows, 'experiment', 'desc'))).toEqual([5, 1, 9]);
    expect(ids(sortCompared(rows, 'trial', 'desc'))).toEqual([9, 5, 1]);
    expect(ids(sortCompared(rows, 'best', 'asc'))).toEqual([9, 5, 1]);
    expect(ids(sortCompared(rows, 'best', 'desc'))).toEqual([5, 9, 1]);
    expect(ids(sortCompared(rows, 'latest', 'asc'))).toEqual([5, 9, 1]);
    expect(ids(sortCompared(rows, 'hp:lr', 'asc'))).toEqual([1, 5, 9]);
    expect(ids(sortCompared(rows, 'hp:lr', 'desc'))).toEqual([5, 1, 9]);
  });
});
