// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { canOpen, parseTaskStart, taskDetail } from './tasks';

describe('tasks', () => {
  it('turns the start form into a request body, or says what is wrong', () => {
    expect(parseTaskStart('2', '')).toEqual({ start: { slots: 2 } });
    expect(parseTaskStart(' 0 ', ' gpu ')).toEqual({ start: { slots: 0, resource_pool: 'gpu' } });
    for (const bad of ['', '-1', '1.5', 'two', '5000'])
      expect(parseTaskStart(bad, '')).toEqual({ error: 'Slots must be a whole number from 0 to 4096.' });
  });
  it('opens only a running task that has not ended', () => {
    expect(canOpen({ state: 'RUNNING', ended_at: null })).toBe(true);
    expect(canOpen({ state: 'PENDING', ended_at: null })).toBe(false);
    expect(canOpen({ state: 'STARTING', ended_at: null })).toBe(false);
    expect(canOpen({ state: 'TERMINATED', ended_at: '2026-03-01T10:00:00Z' })).toBe(false);
  });
  it('says why a task waits or how it ended', () => {
    const base = { pending_reason: null, exit_reason: null, exit_code: null, end_cause: null };
    expect(taskDetail(base)).toBe('');
    expect(taskDetail({ ...base, pending_reason: 'needs 2 slots on one agent' })).toBe('needs 2 slots on one agent');
    expect(taskDetail({ ...base, end_cause: 'USER_KILL', exit_reason: 'killed by ada' })).toBe('killed by ada');
    expect(taskDetail({ ...base, end_cause: 'FAILED', exit_reason: 'exited 3', exit_code: 3 })).toBe(
      'exited 3 (exit code 3)',
    );
  });
});
