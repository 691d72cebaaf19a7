// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { parseConfig, retentionOf, searcherLength } from './config';

const grid = `# Grid search
name: quadratic-grid
description: |
  searcher:
    max_length: {epochs: 9}
hyperparameters:
  learning_rate: {type: log, base: 10, minval: -3, maxval: -0.5, count: 4}
  batch_size:
    type: categorical
    vals: [16, 64]
bind_mounts:
  - host_path: /data
    save_trial_latest: 7
searcher:
  name: grid   # comment
  metric: "validation_loss"
  max_length:
    batches: 300
checkpoint_storage: {save_trial_latest: 3, host_path: "/tmp/a#b"}
`;

describe('config', () => {
  it('reads block and flow mappings, skipping lists and block scalars', () => {
    const c = parseConfig(grid);
    expect(c.name).toBe('quadratic-grid');
    expect(c.hyperparameters).toEqual({
      learning_rate: { type: 'log', base: '10', minval: '-3', maxval: '-0.5', count: '4' },
      batch_size: { type: 'categorical', vals: '[16, 64]' },
    });
    expect(c.searcher).toEqual({ name: 'grid', metric: 'validation_loss', max_length: { batches: '300' } });
    expect(c.checkpoint_storage).toEqual({ save_trial_latest: '3', host_path: '/tmp/a#b' });
  });

  it("finds the searcher's unit and length", () => {
    expect(searcherLength(parseConfig(grid))).toEqual({ unit: 'batches', length: 300 });
    expect(searcherLength(parseConfig('searcher:\n  max_length: {epochs: 4}\n'))).toEqual({
      unit: 'epochs',
      length: 4,
    });
    expect(searcherLength(parseConfig('searcher:\n  max_length: 500\n'))).toEqual({ unit: null, length: 500 });
    expect(searcherLength(parseConfig('searcher:\n  time_metric: records\n  max_time: 6400\n'))).toEqual({
      unit: 'records',
      length: 6400,
    });
  });

  it('reads retention with the defaults, the days in either place', () => {
    expect(retentionOf(parseConfig(grid))).toEqual({
      saveExperimentBest: 0,
      saveTrialBest: 1,
      saveTrialLatest: 3,
      logRetentionDays: null,
    });
    expect(retentionOf(parseConfig('log_retention_days: -1\n')).logRetentionDays).toBe(-1);
    expect(retentionOf(parseConfig('retention_policy:\n  log_retention_days: 30\n')).logRetentionDays).toBe(30);
  });
});
