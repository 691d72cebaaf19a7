// Log lines in the trial page: a bounded buffer, search and the ranks seen.
import type { LogLine } from '../api/types';

export const MAX_LOG_LINES = 20000;

// Appends new lines (ids increase), keeping at most `max`; `dropped` counts
// what fell off the front.
export function appendLines(
  buffer: { lines: LogLine[]; dropped: number },
  more: LogLine[],
  max: number = MAX_LOG_LINES,
): { lines: LogLine[]; dropped: number } {
  if (more.length === 0) return buffer;
  const last = buffer.lines.length ? buffer.lines[buffer.lines.length - 1].id : -Infinity;
  const fresh = more.filter((l) => l.id > last);
  if (fresh.length === 0) return buffer;
  const lines = buffer.lines.concat(fresh);
  const over = Math.max(0, lines.length - max);
  return { lines: over ? lines.slice(over) : lines, dropped: buffer.dropped + over };
}

// Lines containing `text`, case-insensitively; all of them when it is empty.
export function searchLines(lines: LogLine[], text: string): LogLine[] {
  const needle = text.trim().toLowerCase();
  if (!needle) return lines;
  return lines.filter((l) => l.line.toLowerCase().includes(needle));
}

// Splits a line around the matches of `text`, for highlighting.
export function splitMatches(line: string, text: string): { text: string; match: boolean }[] {
  const needle = text.trim().toLowerCase();
  if (!needle) return [{ text: line, match: false }];
  const out: { text: string; match: boolean }[] = [];
  const lower = line.toLowerCase();
  let i = 0;
  for (;;) {
    const j = lower.indexOf(needle, i);
    if (j < 0) break;
    if (j > i) out.push({ text: line.slice(i, j), match: false });
    out.push({ text: line.slice(j, j + needle.length), match: true });
    i = j + needle.length;
  }
  if (i < line.length) out.push({ text: line.slice(i), match: false });
  return out;
}

export function ranksOf(lines: LogLine[], worldSize = 0): number[] {
  const ranks = new Set<number>();
  for (let r = 0; r < worldSize; r++) ranks.add(r);
  for (const l of lines) ranks.add(l.rank);
  return Array.from(ranks).sort((a, b) => a - b);
}

export function formatLogTime(tsMs: number): string {
  const d = new Date(tsMs);
  if (Number.isNaN(d.getTime())) return '';
  return d.toISOString().slice(11, 23);
}
