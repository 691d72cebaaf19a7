// The master's REST API, typed from docs/openapi.json: openapi-fetch over the
// generated `paths` (src/api/openapi.d.ts), sent through the app's transport
// (transport.ts: token, conditional GETs, errors as ApiError). `api` names
// each call the pages make; every one resolves to the answer's body or
// throws an ApiError, so TanStack Query (queries.ts) sees failures as errors.
import createClient from 'openapi-fetch';
import type { paths } from './openapi';
import type {
  ExperimentAction,
  ExperimentPatch,
  MetricKind,
  ModelCreate,
  ProjectCreate,
  ProjectPatch,
  TaskStart,
  UserPatch,
  VersionPatch,
  VersionRegister,
  WebhookCreate,
  WorkspaceCreate,
  WorkspacePatch,
  WorkspaceRole,
} from './types';
import { currentSession, endSession, subscribeSession } from '../auth/session';
import { ApiError, ORIGIN, createTransport, type TransportOptions } from './transport';

export { ApiError, failureText } from './transport';

export type QueryParams = Record<string, string | number | boolean | null | undefined>;

// Query parameters without the empty ones (an empty filter is no filter).
export function cleanParams<T extends QueryParams>(params: T): T {
  const out: QueryParams = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out as T;
}

// The answer's body, or the transport's ApiError (openapi-fetch passes
// thrown errors on; `error` is only set for answers the transport let through).
async function body<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || data === undefined)
    throw new ApiError(`${response.status} ${response.statusText}`.trim(), response.status, 'http_error', error);
  return data;
}

export function createApi(options: TransportOptions = {}) {
  const transport = createTransport(options);
  const rest = createClient<paths>({ baseUrl: ORIGIN, fetch: transport.fetch });
  const id = (n: number) => ({ params: { path: { id: n } } });

  return {
    rest,
    clearCache: transport.clearCache,

    // Users. Signing in sends no token, and its 401 means a wrong password;
    // signing out sends the token it ends.
    login: (username: string, password: string) =>
      body(rest.POST('/api/v1/auth/login', { body: { username, password } })),
    logout: (token: string) =>
      body(rest.POST('/api/v1/auth/logout', { headers: { Authorization: `Bearer ${token}` } })),
    users: (signal?: AbortSignal) => body(rest.GET('/api/v1/users', { signal })),
    createUser: (username: string, password: string, role: 'admin' | 'user') =>
      body(rest.POST('/api/v1/users', { body: { username, password, role } })),
    changeUser: (userId: number, patch: UserPatch) =>
      body(rest.PATCH('/api/v1/users/{id}', { ...id(userId), body: patch })),

    // Experiments.
    experiments: (query: QueryParams, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/experiments', { params: { query: cleanParams(query) }, signal })),
    experiment: (n: number, signal?: AbortSignal) => body(rest.GET('/api/v1/experiments/{id}', { ...id(n), signal })),
    trials: (n: number, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/experiments/{id}/trials', { ...id(n), signal })),
    experimentMetrics: (n: number, kind: MetricKind, metric: string | null, maxPoints: number, signal?: AbortSignal) =>
      body(
        rest.GET('/api/v1/experiments/{id}/metrics', {
          params: { path: { id: n }, query: { kind, metric: metric ?? undefined, max_points: maxPoints } },
          signal,
        }),
      ),
    experimentAction: (n: number, action: ExperimentAction) =>
      body(rest.POST('/api/v1/experiments/{id}/{action}', { params: { path: { id: n, action } } })),
    changeExperiment: (n: number, patch: ExperimentPatch) =>
      body(rest.PATCH('/api/v1/experiments/{id}', { ...id(n), body: patch })),
    deleteExperiment: (n: number) => body(rest.DELETE('/api/v1/experiments/{id}', id(n))),
    experimentCheckpoints: (n: number, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/experiments/{id}/checkpoints', { ...id(n), signal })),
    checkConfig: (config: string, template?: string, projectId?: number) =>
      body(
        rest.POST('/api/v1/experiments/check', {
          body: { config, ...(template ? { template } : {}), ...(projectId ? { project_id: projectId } : {}) },
        }),
      ),
    // A new experiment running `forkedFrom`'s model definition (ring
    // experiment fork), in the parent's project unless one is named.
    forkExperiment: (forkedFrom: number, config: string, template?: string, projectId?: number) =>
      body(
        rest.POST('/api/v1/experiments', {
          body: {
            config,
            forked_from: forkedFrom,
            activate: true,
            ...(template ? { template } : {}),
            ...(projectId ? { project_id: projectId } : {}),
          },
        }),
      ),
    moveExperiment: (n: number, projectId: number) =>
      body(rest.POST('/api/v1/experiments/{id}/move', { ...id(n), body: { project_id: projectId } })),
    templates: (signal?: AbortSignal) => body(rest.GET('/api/v1/templates', { signal })),
    template: (name: string, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/templates/{name}', { params: { path: { name } }, signal })),
    // Creates the template (201, the caller's) or replaces it (its owner or an admin).
    putTemplate: (name: string, config: string) =>
      body(rest.PUT('/api/v1/templates/{name}', { params: { path: { name } }, body: { config } })),
    deleteTemplate: (name: string) => body(rest.DELETE('/api/v1/templates/{name}', { params: { path: { name } } })),
    // A file the master sends (tar.gz), whole.
    download: async (path: string): Promise<Blob> => {
      const res = await transport.fetch(new Request(ORIGIN + path, { headers: { Accept: 'application/gzip' } }));
      return res.blob();
    },
    downloadBytes: async (path: string): Promise<ArrayBuffer> => {
      const res = await transport.fetch(new Request(ORIGIN + path, { headers: { Accept: 'application/gzip' } }));
      return res.arrayBuffer();
    },
    modelDefinitionPath: (n: number) => `/api/v1/experiments/${n}/model_definition`,
    checkpointDownloadPath: (uuid: string) => `/api/v1/checkpoints/${encodeURIComponent(uuid)}/download`,

    // Trials.
    trial: (n: number, signal?: AbortSignal) => body(rest.GET('/api/v1/trials/{id}', { ...id(n), signal })),
    killTrial: (n: number) => body(rest.POST('/api/v1/trials/{id}/kill', id(n))),
    trialMetrics: (n: number, kind: MetricKind, maxPoints: number, signal?: AbortSignal) =>
      body(
        rest.GET('/api/v1/trials/{id}/metrics', {
          params: { path: { id: n }, query: { kind, max_points: maxPoints } },
          signal,
        }),
      ),
    allocations: (n: number, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/trials/{id}/allocations', { ...id(n), signal })),
    checkpoints: (n: number, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/trials/{id}/checkpoints', { ...id(n), signal })),
    // Trains the trial on from its latest checkpoint to `length` (in its
    // searcher's units): a new experiment, or with inPlace its own ended one.
    continueTrial: (n: number, length: number, inPlace: boolean) =>
      body(
        rest.POST('/api/v1/trials/{id}/continue', {
          ...id(n),
          body: { length, ...(inPlace ? { in_place: true } : {}) },
        }),
      ),
    // Log lines after `offset`; with follow, the master holds the request up
    // to 20 s until there is a new line.
    logs: (
      n: number,
      p: { offset: number; rank?: number | null; follow?: boolean; limit?: number },
      signal?: AbortSignal,
    ) =>
      body(
        rest.GET('/api/v1/trials/{id}/logs', {
          params: {
            path: { id: n },
            query: cleanParams({
              offset: p.offset,
              rank: p.rank ?? undefined,
              follow: p.follow ? 'true' : undefined,
              limit: p.limit,
            }) as never,
          },
          signal,
        }),
      ),

    // The model registry: models by name, and each one's versions.
    models: (query: QueryParams, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/models', { params: { query: cleanParams(query) }, signal })),
    createModel: (model: ModelCreate) => body(rest.POST('/api/v1/models', { body: model })),
    modelVersions: (name: string, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/models/{name}/versions', { params: { path: { name } }, signal })),
    registerVersion: (name: string, version: VersionRegister) =>
      body(rest.POST('/api/v1/models/{name}/versions', { params: { path: { name } }, body: version })),
    changeVersion: (name: string, version: number, patch: VersionPatch) =>
      body(
        rest.PATCH('/api/v1/models/{name}/versions/{version}', {
          params: { path: { name, version: String(version) } },
          body: patch,
        }),
      ),

    // Webhooks: every one (without secrets), a new one (its secret in this
    // answer only), deleting one, a test event now, and recent deliveries.
    webhooks: (signal?: AbortSignal) => body(rest.GET('/api/v1/webhooks', { signal })),
    createWebhook: (webhook: WebhookCreate) => body(rest.POST('/api/v1/webhooks', { body: webhook })),
    deleteWebhook: (n: number) => body(rest.DELETE('/api/v1/webhooks/{id}', id(n))),
    testWebhook: (n: number) => body(rest.POST('/api/v1/webhooks/{id}/test', id(n))),
    webhookDeliveries: (n: number, limit: number, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: n }, query: { limit } }, signal })),

    // Workspaces (the caller's; an admin's: all), their members, pools and
    // projects.
    workspaces: (query: QueryParams, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/workspaces', { params: { query: cleanParams(query) }, signal })),
    workspace: (n: number, signal?: AbortSignal) => body(rest.GET('/api/v1/workspaces/{id}', { ...id(n), signal })),
    createWorkspace: (w: WorkspaceCreate) => body(rest.POST('/api/v1/workspaces', { body: w })),
    changeWorkspace: (n: number, patch: WorkspacePatch) =>
      body(rest.PATCH('/api/v1/workspaces/{id}', { ...id(n), body: patch })),
    deleteWorkspace: (n: number) => body(rest.DELETE('/api/v1/workspaces/{id}', id(n))),
    setMember: (n: number, username: string, role: WorkspaceRole) =>
      body(
        rest.PUT('/api/v1/workspaces/{id}/members/{username}', {
          params: { path: { id: n, username } },
          body: { role },
        }),
      ),
    removeMember: (n: number, username: string) =>
      body(rest.DELETE('/api/v1/workspaces/{id}/members/{username}', { params: { path: { id: n, username } } })),
    bindPool: (n: number, pool: string, isDefault: boolean) =>
      body(
        rest.PUT('/api/v1/workspaces/{id}/pools/{pool}', {
          params: { path: { id: n, pool } },
          body: { default: isDefault },
        }),
      ),
    unbindPool: (n: number, pool: string) =>
      body(rest.DELETE('/api/v1/workspaces/{id}/pools/{pool}', { params: { path: { id: n, pool } } })),
    projects: (workspaceId: number, signal?: AbortSignal) =>
      body(rest.GET('/api/v1/workspaces/{id}/projects', { ...id(workspaceId), signal })),
    createProject: (workspaceId: number, p: ProjectCreate) =>
      body(rest.POST('/api/v1/workspaces/{id}/projects', { ...id(workspaceId), body: p })),
    changeProject: (n: number, patch: ProjectPatch) =>
      body(rest.PATCH('/api/v1/projects/{id}', { ...id(n), body: patch })),
    deleteProject: (n: number) => body(rest.DELETE('/api/v1/projects/{id}', id(n))),

    // The cluster.
    agents: (signal?: AbortSignal) => body(rest.GET('/api/v1/agents', { signal })),
    jobs: (signal?: AbortSignal) => body(rest.GET('/api/v1/jobs', { signal })),
    pools: (signal?: AbortSignal) => body(rest.GET('/api/v1/pools', { signal })),

    // Shells: yours (an admin's: everyone's), a new one, ending one, and a
    // one-time ticket that opens its terminal's WebSocket (lib/terminal.ts).
    shells: (signal?: AbortSignal) => body(rest.GET('/api/v1/shells', { signal })),
    startShell: (start: TaskStart) => body(rest.POST('/api/v1/shells', { body: start })),
    killShell: (n: number) => body(rest.POST('/api/v1/shells/{id}/kill', id(n))),
    terminalPath: (n: number) => `/api/v1/shells/${n}/terminal`,
    terminalTicket: (n: number) => body(rest.POST('/api/v1/shells/{id}/terminal/ticket', id(n))),

    // Notebooks, the same way; each opens on the task proxy's own origin
    // through a one-time link (proxyLink).
    notebooks: (signal?: AbortSignal) => body(rest.GET('/api/v1/notebooks', { signal })),
    startNotebook: (start: TaskStart) => body(rest.POST('/api/v1/notebooks', { body: start })),
    killNotebook: (n: number) => body(rest.POST('/api/v1/notebooks/{id}/kill', id(n))),
    proxyLink: (taskId: number) => body(rest.POST('/api/v1/tasks/{id}/proxy/link', id(taskId))),
  };
}

export type Api = ReturnType<typeof createApi>;

// The one client of the app: the session's token, and a 401 signs out with
// the master's reason. A new session starts without the last one's answers.
export const api = createApi({
  token: () => currentSession()?.token ?? null,
  onUnauthorized: (error) => endSession(error.message),
});
subscribeSession(() => api.clearCache());
