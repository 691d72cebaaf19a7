import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/transport';
import { bulkSummary, moveSummary, moveTitle, runBulk, selectionTitle } from './bulk';

describe('bulk actions', () => {
  it('acts on each experiment and keeps every refusal with its experiment', async () => {
    const seen: number[] = [];
    const result = await runBulk([3, 5, 8], async (id) => {
      seen.push(id);
      if (id === 5) throw new ApiError('experiment 5 is active; kill it first', 409, 'conflict');
      if (id === 8) throw new ApiError('only its owner or an admin may', 403, 'permission_denied');
    });
    expect(seen).toEqual([3, 5, 8]);
    expect(result).toEqual({
      done: [3],
      failed: [
        { id: 5, message: 'experiment 5 is active; kill it first' },
        { id: 8, message: 'Not allowed: only its owner or an admin may' },
      ],
    });
    expect(bulkSummary('delete', result)).toBe('Delete: done for 1 experiment; could not delete 2 experiments.');
    expect(bulkSummary('archive', { done: [1, 2], failed: [] })).toBe('Archive: done for 2 experiments.');
    expect(selectionTitle('kill', [{ id: 4 }, { id: 2 }])).toBe('Kill 2 experiments (4, 2)?');
  });
  it('names the project experiments move to', () => {
    expect(moveSummary('nlp / bert', { done: [1, 2], failed: [] })).toBe('Move to nlp / bert: done for 2 experiments.');
    expect(moveSummary('nlp / bert', { done: [1], failed: [{ id: 2, message: 'no' }] })).toBe(
      'Move to nlp / bert: done for 1 experiment; could not move 1 experiment.',
    );
    expect(moveTitle([{ id: 4 }])).toBe('Move experiment 4');
    expect(moveTitle([{ id: 4 }, { id: 2 }])).toBe('Move 2 experiments (4, 2)');
  });
});
