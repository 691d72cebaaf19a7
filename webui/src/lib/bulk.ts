// Acting on several experiments at once: each through its own route, one
// after another (the master orders each change on its own), and every
// refusal kept with the experiment it concerns, so the page can say which
// rows failed and why.
import type { Experiment, ExperimentAction } from '../api/types';
import { failureText } from '../api/transport';
import { ACTIONS } from './experiments';

export type BulkAction = ExperimentAction | 'delete';

export const BULK_ACTIONS: BulkAction[] = ['pause', 'activate', 'kill', 'archive', 'unarchive', 'delete'];

export function bulkLabel(action: BulkAction): string {
  return action === 'delete' ? 'Delete' : ACTIONS[action].label;
}

export function bulkExplain(action: BulkAction): string {
  return action === 'delete'
    ? 'Each is deleted with its trials, metrics, logs and checkpoint files. Only experiments that have ended can be deleted. This cannot be undone.'
    : ACTIONS[action].explain;
}

export function bulkDanger(action: BulkAction): boolean {
  return action === 'delete' || ACTIONS[action].danger;
}

export interface BulkFailure {
  id: number;
  message: string;
}

export interface BulkResult {
  done: number[];
  failed: BulkFailure[];
}

export async function runBulk(ids: number[], act: (id: number) => Promise<unknown>): Promise<BulkResult> {
  const result: BulkResult = { done: [], failed: [] };
  for (const id of ids) {
    try {
      await act(id);
      result.done.push(id);
    } catch (e) {
      result.failed.push({ id, message: failureText(e) });
    }
  }
  return result;
}

// One line for the page: what was done, and how many failed.
export function bulkSummary(action: BulkAction, r: BulkResult): string {
  const verb = bulkLabel(action).toLowerCase();
  const n = (k: number) => `${k} ${k === 1 ? 'experiment' : 'experiments'}`;
  if (r.failed.length === 0) return `${bulkLabel(action)}: done for ${n(r.done.length)}.`;
  return `${bulkLabel(action)}: done for ${n(r.done.length)}; could not ${verb} ${n(r.failed.length)}.`;
}

export function selectionTitle(action: BulkAction, experiments: Pick<Experiment, 'id'>[]): string {
  const ids = experiments.map((e) => e.id).join(', ');
  return `${bulkLabel(action)} ${experiments.length} ${experiments.length === 1 ? 'experiment' : 'experiments'} (${ids})?`;
}

// Moving the selected experiments to a project (POST /experiments/{id}/move
// for each): its own dialog, which names the target.
export function moveSummary(target: string, r: BulkResult): string {
  const n = (k: number) => `${k} ${k === 1 ? 'experiment' : 'experiments'}`;
  const head = `Move to ${target}: done for ${n(r.done.length)}`;
  return r.failed.length === 0 ? `${head}.` : `${head}; could not move ${n(r.failed.length)}.`;
}

export function moveTitle(experiments: Pick<Experiment, 'id'>[]): string {
  if (experiments.length === 1) return `Move experiment ${experiments[0].id}`;
  return `Move ${experiments.length} experiments (${experiments.map((e) => e.id).join(', ')})`;
}
