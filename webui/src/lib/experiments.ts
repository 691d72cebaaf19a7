// The experiments list's filters, sort and page as URL query parameters (so a
// view can be bookmarked and shared), the API query they make, and which
// actions an experiment in a given state offers, and to whom.
import type { QueryParams } from '../api/client';
import type { Experiment, ExperimentAction, ExperimentSort, RunState } from '../api/types';

export type SortKey = ExperimentSort;
export type StateFilter = '' | 'ACTIVE' | 'PAUSED' | 'STOPPING' | 'COMPLETED' | 'CANCELED' | 'ERROR';

export const STATE_FILTERS: { value: StateFilter; label: string }[] = [
  { value: '', label: 'All states' },
  { value: 'ACTIVE', label: 'Active' },
  { value: 'PAUSED', label: 'Paused' },
  { value: 'STOPPING', label: 'Stopping' },
  { value: 'COMPLETED', label: 'Completed' },
  { value: 'CANCELED', label: 'Canceled' },
  { value: 'ERROR', label: 'Error' },
];

const SORT_KEYS: SortKey[] = [
  'id',
  'name',
  'state',
  'owner',
  'progress',
  'best_validation',
  'num_trials',
  'created_at',
];
export const PAGE_SIZES = [25, 50, 100];

// Archived experiments: hidden (the default), listed with the others, or alone.
export type ArchivedFilter = 'hide' | 'show' | 'only';

export const ARCHIVED_FILTERS: { value: ArchivedFilter; label: string }[] = [
  { value: 'hide', label: 'Not archived' },
  { value: 'show', label: 'Archived too' },
  { value: 'only', label: 'Only archived' },
];

export interface ListQuery {
  state: StateFilter;
  owner: string;
  label: string;
  name: string;
  archived: ArchivedFilter;
  // Ids of a workspace and of one of its projects, or 0 for any.
  workspace: number;
  project: number;
  sort: SortKey;
  order: 'asc' | 'desc';
  page: number; // from 1
  pageSize: number;
}

export const DEFAULT_LIST_QUERY: ListQuery = {
  state: '',
  owner: '',
  label: '',
  name: '',
  archived: 'hide',
  workspace: 0,
  project: 0,
  sort: 'id',
  order: 'desc',
  page: 1,
  pageSize: 25,
};

export function parseListQuery(search: string): ListQuery {
  const p = new URLSearchParams(search);
  const q: ListQuery = { ...DEFAULT_LIST_QUERY };
  const state = p.get('state') ?? '';
  if (STATE_FILTERS.some((f) => f.value === state)) q.state = state as StateFilter;
  q.owner = p.get('owner') ?? '';
  q.label = p.get('label') ?? '';
  q.name = p.get('name') ?? '';
  // archived=true (both) is the URL of earlier versions' checkbox.
  const archived = p.get('archived');
  q.archived = archived === 'true' ? 'show' : archived === 'only' ? 'only' : 'hide';
  for (const [key, param] of [
    ['workspace', 'workspace_id'],
    ['project', 'project_id'],
  ] as const) {
    const id = Number(p.get(param));
    if (Number.isInteger(id) && id > 0) q[key] = id;
  }
  const sort = p.get('sort');
  if (sort && (SORT_KEYS as string[]).includes(sort)) q.sort = sort as SortKey;
  const order = p.get('order');
  if (order === 'asc' || order === 'desc') q.order = order;
  const page = Number(p.get('page'));
  if (Number.isInteger(page) && page >= 1) q.page = page;
  const size = Number(p.get('size'));
  if (PAGE_SIZES.includes(size)) q.pageSize = size;
  return q;
}

// The URL query of a list view; defaults are left out.
export function listQueryToSearch(q: ListQuery): string {
  const p = new URLSearchParams();
  const d = DEFAULT_LIST_QUERY;
  if (q.state !== d.state) p.set('state', q.state);
  if (q.owner) p.set('owner', q.owner);
  if (q.label) p.set('label', q.label);
  if (q.name) p.set('name', q.name);
  if (q.archived !== 'hide') p.set('archived', q.archived === 'show' ? 'true' : 'only');
  if (q.workspace) p.set('workspace_id', String(q.workspace));
  if (q.project) p.set('project_id', String(q.project));
  if (q.sort !== d.sort) p.set('sort', q.sort);
  if (q.order !== d.order) p.set('order', q.order);
  if (q.page !== 1) p.set('page', String(q.page));
  if (q.pageSize !== d.pageSize) p.set('size', String(q.pageSize));
  const s = p.toString();
  return s ? `?${s}` : '';
}

// GET /api/v1/experiments parameters.
export function listQueryToParams(q: ListQuery): QueryParams {
  return {
    state: q.state === 'STOPPING' ? 'STOPPING_COMPLETED,STOPPING_CANCELED,STOPPING_ERROR' : q.state,
    owner: q.owner,
    label: q.label,
    name: q.name,
    archived: q.archived === 'show' ? undefined : q.archived === 'only' ? 'true' : 'false',
    workspace_id: q.workspace || undefined,
    project_id: q.project || undefined,
    sort: q.sort,
    order: q.order,
    limit: q.pageSize,
    offset: (q.page - 1) * q.pageSize,
  };
}

// Clicking a column: the same one flips the order; a new one starts with the
// order that shows the interesting end first.
export function toggleSort(q: ListQuery, key: SortKey): ListQuery {
  if (q.sort === key) return { ...q, order: q.order === 'asc' ? 'desc' : 'asc', page: 1 };
  const descFirst: SortKey[] = ['id', 'progress', 'num_trials', 'created_at'];
  return { ...q, sort: key, order: descFirst.includes(key) ? 'desc' : 'asc', page: 1 };
}

export function isTerminal(state: RunState): boolean {
  return state === 'COMPLETED' || state === 'CANCELED' || state === 'ERROR';
}

export function availableActions(e: Pick<Experiment, 'state' | 'archived'>): ExperimentAction[] {
  if (isTerminal(e.state)) return [e.archived ? 'unarchive' : 'archive'];
  switch (e.state) {
    case 'ACTIVE':
      return ['pause', 'kill'];
    case 'PAUSED':
      return ['activate', 'kill'];
    case 'STOPPING_COMPLETED':
      return ['kill'];
    default:
      return [];
  }
}

// Whether the user may pause, activate, kill or archive the experiment: an
// admin may change any, anyone else their own (the master answers 403 otherwise).
export function mayChange(user: { username: string; role: string } | null, e: Pick<Experiment, 'owner'>): boolean {
  if (!user) return false;
  return user.role === 'admin' || user.username === e.owner;
}

export interface ActionText {
  label: string;
  title: (e: Pick<Experiment, 'id' | 'name'>) => string;
  explain: string;
  danger: boolean;
}

export const ACTIONS: Record<ExperimentAction, ActionText> = {
  pause: {
    label: 'Pause',
    title: (e) => `Pause experiment ${e.id} (${e.name})?`,
    explain: 'Running trials checkpoint and stop; activating the experiment resumes them where they left off.',
    danger: false,
  },
  activate: {
    label: 'Activate',
    title: (e) => `Activate experiment ${e.id} (${e.name})?`,
    explain: 'Its trials go back into the queue and resume from their latest checkpoints.',
    danger: false,
  },
  kill: {
    label: 'Kill',
    title: (e) => `Kill experiment ${e.id} (${e.name})?`,
    explain: 'Every trial stops now and the experiment ends CANCELED. This cannot be undone.',
    danger: true,
  },
  archive: {
    label: 'Archive',
    title: (e) => `Archive experiment ${e.id} (${e.name})?`,
    explain: 'It is hidden from the list unless the Archived filter shows it. Nothing is deleted.',
    danger: false,
  },
  unarchive: {
    label: 'Unarchive',
    title: (e) => `Unarchive experiment ${e.id} (${e.name})?`,
    explain: 'It shows in the list again.',
    danger: false,
  },
};

// Labels as typed in one field: separated by commas, trimmed, each kept once.
export function parseLabels(text: string): string[] {
  const out: string[] = [];
  for (const l of text.split(',').map((s) => s.trim())) if (l && !out.includes(l)) out.push(l);
  return out;
}
