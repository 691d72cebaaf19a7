// What the pages read, as TanStack Query options: one key per resource (so
// two views of one experiment share one request and one cache entry), how
// often it is polled, and which keys an action makes stale. Polling pauses
// while the tab is hidden and slows down after failures (pollEvery); an
// interval of 0 reads once. The transport makes every poll conditional.
import { QueryClient, keepPreviousData, queryOptions } from '@tanstack/react-query';
import { gunzip, listTar } from '../lib/tar';
import { api, type QueryParams } from './client';
import type { MetricKind } from './types';

export const DEFAULT_POLL_MS = 3000;
const MAX_BACKOFF_MS = 30000;

// A refetchInterval: every `ms` while the last reads succeeded, then twice
// as long after each failure in a row, up to 30 s; 0 never polls.
export function pollEvery(ms: number) {
  return (query: { state: { fetchFailureCount: number } }): number | false => {
    if (ms <= 0) return false;
    const failures = query.state.fetchFailureCount;
    return failures ? Math.min(ms * 2 ** failures, MAX_BACKOFF_MS) : ms;
  };
}

export const keys = {
  experiments: ['experiments'] as const,
  experimentLists: ['experiments', 'list'] as const,
  experimentList: (params: QueryParams) => ['experiments', 'list', params] as const,
  experiment: (id: number) => ['experiments', id] as const,
  experimentTrials: (id: number) => ['experiments', id, 'trials'] as const,
  experimentMetrics: (id: number, kind: MetricKind, metric: string | null, maxPoints: number, final: boolean) =>
    ['experiments', id, 'metrics', kind, metric, maxPoints, final] as const,
  experimentCheckpoints: (id: number) => ['experiments', id, 'checkpoints'] as const,
  modelFiles: (id: number) => ['experiments', id, 'model_definition'] as const,
  trial: (id: number) => ['trials', id] as const,
  trialMetrics: (id: number, kind: MetricKind, final: boolean) => ['trials', id, 'metrics', kind, final] as const,
  allocations: (id: number) => ['trials', id, 'allocations'] as const,
  checkpoints: (id: number) => ['trials', id, 'checkpoints'] as const,
  agents: ['agents'] as const,
  jobs: ['jobs'] as const,
  pools: ['pools'] as const,
  users: ['users'] as const,
  shells: ['shells'] as const,
  notebooks: ['notebooks'] as const,
  templates: ['templates'] as const,
  // Models are keyed by name, which may be any word ("list" too): the two
  // kinds of entry have keys of their own.
  models: ['models'] as const,
  modelList: (params: QueryParams) => ['models', 'list', params] as const,
  modelVersions: (name: string) => ['models', 'one', name] as const,
  webhooks: ['webhooks'] as const,
  webhookList: ['webhooks', 'list'] as const,
  webhookDeliveries: (id: number) => ['webhooks', id, 'deliveries'] as const,
  // A workspace's projects are under its key: a change to a project (or a
  // move of an experiment, which changes their counts) refreshes them all.
  workspaces: ['workspaces'] as const,
  workspaceList: (params: QueryParams) => ['workspaces', 'list', params] as const,
  workspace: (id: number) => ['workspaces', id] as const,
  workspaceProjects: (id: number) => ['workspaces', id, 'projects'] as const,
};

export const queries = {
  experimentList: (params: QueryParams, every = DEFAULT_POLL_MS) =>
    queryOptions({
      queryKey: keys.experimentList(params),
      queryFn: ({ signal }) => api.experiments(params, signal),
      refetchInterval: pollEvery(every),
      // A new filter keeps the old rows on screen until the new arrive.
      placeholderData: keepPreviousData,
    }),
  experiment: (id: number, every = DEFAULT_POLL_MS) =>
    queryOptions({
      queryKey: keys.experiment(id),
      queryFn: ({ signal }) => api.experiment(id, signal),
      refetchInterval: pollEvery(every),
    }),
  experimentTrials: (id: number, every = DEFAULT_POLL_MS) =>
    queryOptions({
      queryKey: keys.experimentTrials(id),
      queryFn: ({ signal }) => api.trials(id, signal),
      refetchInterval: pollEvery(every),
    }),
  // `final` as for a trial's metrics (below).
  experimentMetrics: (id: number, kind: MetricKind, metric: string | null, maxPoints: number, final: boolean) =>
    queryOptions({
      queryKey: keys.experimentMetrics(id, kind, metric, maxPoints, final),
      queryFn: ({ signal }) => api.experimentMetrics(id, kind, metric, maxPoints, signal),
      refetchInterval: pollEvery(final ? 0 : DEFAULT_POLL_MS),
      placeholderData: keepPreviousData,
    }),
  experimentCheckpoints: (id: number, every: number) =>
    queryOptions({
      queryKey: keys.experimentCheckpoints(id),
      queryFn: ({ signal }) => api.experimentCheckpoints(id, signal),
      refetchInterval: pollEvery(every),
    }),
  // The files of the model definition (a tar.gz the browser unpacks the
  // list of); it never changes.
  modelFiles: (id: number) =>
    queryOptions({
      queryKey: keys.modelFiles(id),
      queryFn: async () => listTar(await gunzip(await api.downloadBytes(api.modelDefinitionPath(id)))),
      staleTime: Infinity,
    }),
  trial: (id: number) =>
    queryOptions({
      queryKey: keys.trial(id),
      queryFn: ({ signal }) => api.trial(id, signal),
      refetchInterval: pollEvery(DEFAULT_POLL_MS),
    }),
  // `final`: the trial has ended, so its metrics cannot change: the key
  // changes once (one last read) and polling stops.
  trialMetrics: (id: number, kind: MetricKind, maxPoints: number, final: boolean) =>
    queryOptions({
      queryKey: keys.trialMetrics(id, kind, final),
      queryFn: ({ signal }) => api.trialMetrics(id, kind, maxPoints, signal),
      refetchInterval: pollEvery(final ? 0 : DEFAULT_POLL_MS),
      placeholderData: keepPreviousData,
    }),
  allocations: (id: number, every: number) =>
    queryOptions({
      queryKey: keys.allocations(id),
      queryFn: ({ signal }) => api.allocations(id, signal),
      refetchInterval: pollEvery(every),
    }),
  checkpoints: (id: number, every: number) =>
    queryOptions({
      queryKey: keys.checkpoints(id),
      queryFn: ({ signal }) => api.checkpoints(id, signal),
      refetchInterval: pollEvery(every),
    }),
  agents: () =>
    queryOptions({
      queryKey: keys.agents,
      queryFn: ({ signal }) => api.agents(signal),
      refetchInterval: pollEvery(DEFAULT_POLL_MS),
    }),
  jobs: () =>
    queryOptions({
      queryKey: keys.jobs,
      queryFn: ({ signal }) => api.jobs(signal),
      refetchInterval: pollEvery(DEFAULT_POLL_MS),
    }),
  pools: () =>
    queryOptions({
      queryKey: keys.pools,
      queryFn: ({ signal }) => api.pools(signal),
      refetchInterval: pollEvery(5000),
    }),
  users: () =>
    queryOptions({
      queryKey: keys.users,
      queryFn: ({ signal }) => api.users(signal),
      refetchInterval: pollEvery(10000),
    }),
  shells: () =>
    queryOptions({
      queryKey: keys.shells,
      queryFn: ({ signal }) => api.shells(signal),
      refetchInterval: pollEvery(DEFAULT_POLL_MS),
    }),
  notebooks: () =>
    queryOptions({
      queryKey: keys.notebooks,
      queryFn: ({ signal }) => api.notebooks(signal),
      refetchInterval: pollEvery(DEFAULT_POLL_MS),
    }),
  modelList: (params: QueryParams, every = 10000) =>
    queryOptions({
      queryKey: keys.modelList(params),
      queryFn: ({ signal }) => api.models(params, signal),
      refetchInterval: pollEvery(every),
      placeholderData: keepPreviousData,
    }),
  modelVersions: (name: string) =>
    queryOptions({
      queryKey: keys.modelVersions(name),
      queryFn: ({ signal }) => api.modelVersions(name, signal),
      refetchInterval: pollEvery(10000),
    }),
  webhooks: () =>
    queryOptions({
      queryKey: keys.webhookList,
      queryFn: ({ signal }) => api.webhooks(signal),
      refetchInterval: pollEvery(10000),
    }),
  webhookDeliveries: (id: number, limit: number) =>
    queryOptions({
      queryKey: keys.webhookDeliveries(id),
      queryFn: ({ signal }) => api.webhookDeliveries(id, limit, signal),
      refetchInterval: pollEvery(5000),
    }),
  // `every` 0 for the choices of a filter or a select: read once, and again
  // when the window regains focus.
  workspaceList: (params: QueryParams, every = 10000) =>
    queryOptions({
      queryKey: keys.workspaceList(params),
      queryFn: ({ signal }) => api.workspaces(params, signal),
      refetchInterval: pollEvery(every),
      placeholderData: keepPreviousData,
    }),
  workspace: (id: number) =>
    queryOptions({
      queryKey: keys.workspace(id),
      queryFn: ({ signal }) => api.workspace(id, signal),
      refetchInterval: pollEvery(10000),
    }),
  workspaceProjects: (id: number, every = 10000) =>
    queryOptions({
      queryKey: keys.workspaceProjects(id),
      queryFn: ({ signal }) => api.projects(id, signal),
      refetchInterval: pollEvery(every),
    }),
  templates: () =>
    queryOptions({ queryKey: keys.templates, queryFn: ({ signal }) => api.templates(signal), staleTime: 60000 }),
};

// Every cached list of checkpoints: an experiment's and each of its trials'
// (a change of its checkpoint_storage collects some at once).
export function isCheckpointsKey(key: readonly unknown[]): boolean {
  return key[2] === 'checkpoints' && (key[0] === 'experiments' || key[0] === 'trials');
}

// The app's cache. No automatic retries: polling is the retry, with backoff
// (pollEvery), and a failed first read shows at once with a Retry button.
export function createQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: true, staleTime: 1000 },
      mutations: { retry: false },
    },
  });
}
