import { describe, expect, it, vi } from 'vitest';
import { trial } from '../test/fixtures';
import { mostVaried } from '../components/HparamViews';
import { exitText, placementText } from './TrialPage';

vi.mock('../components/LineChart', () => ({ LineChart: () => null }));

describe('page helpers', () => {
  it('says why an attempt ended without repeating the code', () => {
    expect(exitText({ exit_reason: 'exited with code 0', exit_code: 0, state: 'TERMINATED' })).toBe(
      'exited with code 0',
    );
    expect(exitText({ exit_reason: 'agent lost', exit_code: 137, state: 'TERMINATED' })).toBe('agent lost (code 137)');
    expect(exitText({ exit_reason: null, exit_code: null, state: 'RUNNING' })).toBe('running');
    expect(exitText({ exit_reason: null, exit_code: 2, state: 'TERMINATED' })).toBe('code 2');
  });
  it('names the agents of an attempt', () => {
    expect(placementText(['agent-1', 'agent-2'])).toBe('agent-1, agent-2');
    expect(placementText([{ agent_id: 'a' }])).toBe('a');
    expect(placementText([])).toBe('—');
  });
  it('plots against the hyperparameter with the most distinct values', () => {
    const trials = [
      trial(1, { bs: 16, lr: 0.1 }, 1),
      trial(2, { bs: 16, lr: 0.2 }, 1),
      trial(3, { bs: 64, lr: 0.3 }, 1),
    ];
    expect(mostVaried(trials, ['bs', 'lr'])).toBe('lr');
    expect(mostVaried(trials, [])).toBeUndefined();
  });
});
