// Records shaped like the master's answers, for component tests.
import type {
  Agent,
  Checkpoint,
  Experiment,
  Job,
  Model,
  ModelVersion,
  Pool,
  Project,
  Trial,
  Workspace,
} from '../api/types';
import { startSession, type Session } from '../auth/session';

// Signs in (as an admin unless told otherwise) without asking a master.
export function signIn(over: Partial<Session> = {}): Session {
  const session = { token: 'tok-admin', username: 'admin', role: 'admin', expires_at: '2099-01-01T00:00:00Z', ...over };
  startSession(session);
  return session;
}

export function experiment(over: Partial<Experiment> = {}): Experiment {
  return {
    id: 1,
    name: 'quadratic-grid',
    state: 'ACTIVE',
    owner: 'default',
    config: 'name: quadratic-grid\n',
    progress: 0.5,
    num_trials: 8,
    best_trial_id: 3,
    best_validation: 0.0123,
    created_at: '2026-03-01T10:00:00.000Z',
    ended_at: null,
    archived: false,
    forked_from: null,
    description: 'grid',
    labels: ['demo'],
    searcher: { name: 'grid', metric: 'validation_loss', smaller_is_better: true, max_trials: 8 },
    project_id: 1,
    project: 'Uncategorized',
    workspace_id: 1,
    workspace: 'Uncategorized',
    ...over,
  };
}

// The default workspace (id 1) unless told otherwise.
export function workspace(over: Partial<Workspace> = {}): Workspace {
  const id = over.id ?? 1;
  return {
    id,
    name: id === 1 ? 'Uncategorized' : `ws${id}`,
    description: '',
    created_by: 'admin',
    archived: false,
    created_at: '2026-03-01T10:00:00.000Z',
    default: id === 1,
    members: [],
    pools: [],
    num_projects: 1,
    ...over,
  };
}

export function project(over: Partial<Project> = {}): Project {
  const id = over.id ?? 1;
  return {
    id,
    workspace_id: 1,
    workspace: 'Uncategorized',
    name: id === 1 ? 'Uncategorized' : `p${id}`,
    description: '',
    created_by: 'admin',
    archived: false,
    created_at: '2026-03-01T10:00:00.000Z',
    default: id === 1,
    num_experiments: 0,
    ...over,
  };
}

export function trial(
  id: number,
  hparams: Record<string, unknown>,
  best: number | null,
  over: Partial<Trial> = {},
): Trial {
  return {
    id,
    task_id: id,
    experiment_id: 1,
    state: 'COMPLETED',
    hparams,
    seed: id,
    restarts: 0,
    total_batches: 300,
    best_validation: best,
    latest_checkpoint: null,
    request_id: id,
    searcher_operation: null,
    created_at: '2026-03-01T10:00:00.000Z',
    ended_at: '2026-03-01T10:01:00.000Z',
    log_signal: null,
    ...over,
  };
}

export function model(name: string, over: Partial<Model> = {}): Model {
  return {
    name,
    description: '',
    labels: [],
    owner: 'admin',
    archived: false,
    num_versions: 0,
    created_at: '2026-03-01T10:00:00.000Z',
    updated_at: '2026-03-01T10:00:00.000Z',
    ...over,
  };
}

export function modelVersion(modelName: string, version: number, over: Partial<ModelVersion> = {}): ModelVersion {
  const uuid = `0000000${version}-aaaa-4bbb-8ccc-dddddddddddd`;
  return {
    model: modelName,
    version,
    checkpoint_uuid: uuid,
    checkpoint: { uuid, state: 'ACTIVE', experiment_id: 1, trial_id: 3, batches: 300 },
    name: '',
    notes: '',
    metadata: {},
    labels: [],
    created_by: 'admin',
    created_at: '2026-03-01T10:00:00.000Z',
    updated_at: '2026-03-01T10:00:00.000Z',
    ...over,
  };
}

export function checkpoint(uuid: string, over: Partial<Checkpoint> = {}): Checkpoint {
  return {
    uuid,
    trial_id: 3,
    experiment_id: 1,
    allocation_id: '3.1',
    batches: 300,
    state: 'ACTIVE',
    storage: { type: 'shared_fs', host_path: '/tmp/ckpt', storage_path: uuid },
    resources: [{ path: 'model.bin', size: 1024, sha256: '' }],
    metadata: {},
    validation_metric: 0.5,
    created_at: '2026-03-01T10:00:00.000Z',
    ...over,
  };
}

export function agent(id: string, allocations: (string | null)[]): Agent {
  return {
    id,
    pool: 'default',
    state: 'connected',
    address: '127.0.0.1',
    slots: allocations.map((a, i) => ({ id: i, type: 'cpu', uuid: '', allocation_id: a })),
    enabled: true,
    draining: false,
    runs_as_owner: true,
    container_runtimes: [],
    last_seen_at: new Date().toISOString(),
  };
}

export function job(allocation: string, over: Partial<Job> = {}): Job {
  return {
    allocation_id: allocation,
    kind: 'TRIAL',
    task_id: Number(allocation.split('.')[0]),
    trial_id: Number(allocation.split('.')[0]),
    experiment_id: 1,
    owner: 'default',
    state: 'RUNNING',
    slots: 1,
    pool: 'default',
    priority: 42,
    weight: 1,
    queued_at: '2026-03-01T10:00:00.000Z',
    preempting: false,
    position: null,
    pending_reason: null,
    why_waiting: over.pending_reason ?? null,
    ...over,
  };
}

export function pool(over: Partial<Pool> = {}): Pool {
  return {
    name: 'default',
    configured: true,
    description: '',
    scheduler: 'priority',
    preemption: true,
    fitting_policy: 'best',
    resource_manager: 'agent',
    task_identity: 'agent',
    agents: 2,
    agents_connected: 2,
    slots: 4,
    slots_used: 2,
    jobs_running: 2,
    jobs_pending: 1,
    ...over,
  };
}

// A fetch that answers from a table of URL prefixes and records the calls.
export function fakeFetch(routes: Record<string, (url: string, init?: RequestInit) => Response | Promise<Response>>) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fn = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, init });
    const key = Object.keys(routes)
      .sort((a, b) => b.length - a.length)
      .find((k) => url.startsWith(k));
    if (!key) return json({ error: { code: 'not_found', message: `no route for ${url}` } }, 404);
    return routes[key](url, init);
  };
  return { fn: fn as typeof fetch, calls };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(status === 304 ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}
