// Shells and notebooks as the pages show them: what the start form sends,
// whether a task can be opened, and the line under its state.
import type { Shell, TaskStart } from '../api/types';

export type TaskNoun = 'shell' | 'notebook';

// The body of POST /shells or /notebooks from the start form's fields, or
// the error to show: slots a whole number from 0, the pool's name or empty
// for the default pool.
export function parseTaskStart(slots: string, pool: string): { start: TaskStart } | { error: string } {
  const text = slots.trim();
  if (!/^\d+$/.test(text) || Number(text) > 4096) return { error: 'Slots must be a whole number from 0 to 4096.' };
  const start: TaskStart = { slots: Number(text) };
  if (pool.trim()) start.resource_pool = pool.trim();
  return { start };
}

export function isLive(task: Pick<Shell, 'ended_at'>): boolean {
  return task.ended_at === null;
}

// Its terminal (or its notebook's page) opens only while it runs.
export function canOpen(task: Pick<Shell, 'state' | 'ended_at'>): boolean {
  return isLive(task) && task.state === 'RUNNING';
}

// What to say beside the state: why it waits, or why it ended.
export function taskDetail(task: Pick<Shell, 'pending_reason' | 'exit_reason' | 'exit_code' | 'end_cause'>): string {
  if (task.pending_reason) return task.pending_reason;
  if (task.end_cause) {
    const code = task.exit_code !== null ? ` (exit code ${task.exit_code})` : '';
    return `${task.exit_reason || task.end_cause}${code}`;
  }
  return '';
}
