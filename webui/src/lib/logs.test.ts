// @vitest-environment node
import { describe, expect, it } from 'vitest';
import type { LogLine } from '../api/types';
import { appendLines, ranksOf, searchLines, splitMatches } from './logs';

const line = (id: number, text: string, rank = 0): LogLine => ({
  id,
  allocation_id: '1.0',
  rank,
  stream: 'stdout',
  line: text,
  ts_ms: 0,
});

describe('logs', () => {
  it('appends new lines only and keeps the newest within the bound', () => {
    let b = { lines: [] as LogLine[], dropped: 0 };
    b = appendLines(b, [line(1, 'a'), line(2, 'b')], 3);
    b = appendLines(b, [line(2, 'b'), line(3, 'c'), line(4, 'd')], 3);
    expect(b.lines.map((l) => l.id)).toEqual([2, 3, 4]);
    expect(b.dropped).toBe(1);
    expect(appendLines(b, [])).toBe(b);
  });
  it('searches case-insensitively and marks the matches', () => {
    const lines = [line(1, 'epoch 1 Loss 0.5'), line(2, 'saving checkpoint'), line(3, 'loss 0.2')];
    expect(searchLines(lines, 'LOSS').map((l) => l.id)).toEqual([1, 3]);
    expect(searchLines(lines, '  ')).toBe(lines);
    expect(splitMatches('a loss and a Loss', 'loss')).toEqual([
      { text: 'a ', match: false },
      { text: 'loss', match: true },
      { text: ' and a ', match: false },
      { text: 'Loss', match: true },
    ]);
  });
  it('lists the ranks seen and those the trial has', () => {
    expect(ranksOf([line(1, 'x', 3), line(2, 'y', 0)], 2)).toEqual([0, 1, 3]);
  });
});
