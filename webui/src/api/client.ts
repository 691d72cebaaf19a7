// A typed client of the master's REST API. GETs are conditional: the last
// answer of each URL is kept with its ETag and sent back as If-None-Match,
// so polling an unchanged list costs a 304 and no re-render (`changed` is
// false). Every request goes through `send()`, which adds the signed-in
// user's bearer token and reports a 401 to that token as the end of the
// session (`onUnauthorized`).
import type {
  AgentList,
  AllocationList,
  CheckpointList,
  Experiment,
  ExperimentAction,
  ExperimentList,
  ExperimentMetrics,
  JobList,
  LogPage,
  LoginAnswer,
  LogoutAnswer,
  MetricKind,
  Notebook,
  NotebookList,
  PoolList,
  ProxyLink,
  Shell,
  ShellList,
  TaskStart,
  TerminalTicket,
  Trial,
  TrialList,
  TrialMetrics,
  User,
  UserList,
  UserPatch,
} from './types';
import { currentSession, endSession, subscribeSession } from '../auth/session';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

// What to tell the user when a request they made failed: a refusal (403)
// says so, anything else is the master's (or the network's) message.
export function failureText(e: unknown): string {
  if (e instanceof ApiError && e.status === 403) return `Not allowed: ${e.message}`;
  return (e as Error).message;
}

export interface Fetched<T> {
  data: T;
  changed: boolean;
}

export type QueryParams = Record<string, string | number | boolean | null | undefined>;

export interface ClientOptions {
  baseUrl?: string;
  // The signed-in user's token, sent as "Authorization: Bearer <token>".
  token?: () => string | null;
  // A 401 answered the token that is still in use: the session is over.
  onUnauthorized?: (error: ApiError) => void;
  fetch?: typeof fetch;
  maxCachedUrls?: number;
}

export function buildUrl(base: string, path: string, params?: QueryParams): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) {
    if (v === undefined || v === null || v === '') continue;
    query.set(k, String(v));
  }
  const qs = query.toString();
  return `${base}${path}${qs ? `?${qs}` : ''}`;
}

async function errorFrom(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`.trim();
  let code = 'http_error';
  try {
    const body = await res.json();
    if (body?.error?.message) message = body.error.message;
    if (body?.error?.code) code = body.error.code;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(message, res.status, code);
}

interface SendOptions {
  method?: 'GET' | 'POST' | 'PATCH';
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
  // This token instead of the session's, and a 401 is the caller's to
  // explain (sign-in: a wrong password; sign-out: already signed out).
  token?: string | null;
}

export class ApiClient {
  private readonly base: string;
  private readonly token: () => string | null;
  private readonly onUnauthorized: (error: ApiError) => void;
  private readonly fetchImpl: typeof fetch;
  private readonly maxCached: number;
  private readonly cache = new Map<string, { etag: string; data: unknown }>();

  constructor(options: ClientOptions = {}) {
    this.base = options.baseUrl ?? '';
    this.token = options.token ?? (() => null);
    this.onUnauthorized = options.onUnauthorized ?? (() => {});
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxCached = options.maxCachedUrls ?? 200;
  }

  // Forgets the cached answers (at sign-out: they were another user's view).
  clearCache() {
    this.cache.clear();
  }

  // One request: a network failure becomes an ApiError with status 0, and an
  // error answer (anything but 2xx and 304) an ApiError with its message.
  private async send(url: string, options: SendOptions = {}): Promise<Response> {
    const ownToken = options.token !== undefined;
    const token = ownToken ? options.token : this.token();
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (options.method === 'POST' || options.method === 'PATCH') headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        method: options.method ?? 'GET',
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
        cache: 'no-store',
      });
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw e;
      throw new ApiError('cannot reach the master; is it running?', 0, 'unavailable');
    }
    if (res.ok || res.status === 304) return res;
    const error = await errorFrom(res);
    // A 401 to a token already replaced (a request sent before signing in
    // again) does not end the new session.
    if (res.status === 401 && !ownToken && token === this.token()) this.onUnauthorized(error);
    throw error;
  }

  async get<T>(path: string, params?: QueryParams, signal?: AbortSignal): Promise<Fetched<T>> {
    const url = buildUrl(this.base, path, params);
    const cached = this.cache.get(url);
    const res = await this.send(url, { headers: cached ? { 'If-None-Match': cached.etag } : {}, signal });
    if (res.status === 304) {
      if (!cached) throw new ApiError('the master answered 304 to an unconditional request', 304, 'http_error');
      this.cache.delete(url); // most recently used last
      this.cache.set(url, cached);
      return { data: cached.data as T, changed: false };
    }
    const data = (await res.json()) as T;
    const etag = res.headers.get('ETag');
    this.cache.delete(url);
    if (etag) {
      this.cache.set(url, { etag, data });
      while (this.cache.size > this.maxCached) this.cache.delete(this.cache.keys().next().value as string);
    }
    return { data, changed: true };
  }

  async post<T>(path: string, body?: unknown, token?: string | null): Promise<T> {
    const res = await this.send(buildUrl(this.base, path), { method: 'POST', body, token });
    return (await res.json()) as T;
  }

  async patch<T>(path: string, body: unknown): Promise<T> {
    const res = await this.send(buildUrl(this.base, path), { method: 'PATCH', body });
    return (await res.json()) as T;
  }

  // Users. Signing in sends no token, and its 401 means a wrong password.
  login(username: string, password: string) {
    return this.post<LoginAnswer>('/api/v1/auth/login', { username, password }, null);
  }
  logout(token: string) {
    return this.post<LogoutAnswer>('/api/v1/auth/logout', undefined, token);
  }

  // User administration (admins): the list, a new user, and changes to one
  // (password, active, linked Unix account).
  users(signal?: AbortSignal) {
    return this.get<UserList>('/api/v1/users', undefined, signal);
  }
  createUser(username: string, password: string, role: 'admin' | 'user') {
    return this.post<User>('/api/v1/users', { username, password, role });
  }
  changeUser(id: number, patch: UserPatch) {
    return this.patch<User>(`/api/v1/users/${id}`, patch);
  }

  // Experiments.
  experiments(query: QueryParams, signal?: AbortSignal) {
    return this.get<ExperimentList>('/api/v1/experiments', query, signal);
  }
  experiment(id: number, signal?: AbortSignal) {
    return this.get<Experiment>(`/api/v1/experiments/${id}`, undefined, signal);
  }
  trials(experimentId: number, signal?: AbortSignal) {
    return this.get<TrialList>(`/api/v1/experiments/${experimentId}/trials`, undefined, signal);
  }
  experimentMetrics(id: number, kind: MetricKind, metric: string | null, maxPoints: number, signal?: AbortSignal) {
    return this.get<ExperimentMetrics>(
      `/api/v1/experiments/${id}/metrics`,
      { kind, metric, max_points: maxPoints },
      signal,
    );
  }
  // A file the master sends (tar.gz), whole, for the browser to save.
  async download(path: string): Promise<Blob> {
    const res = await this.send(buildUrl(this.base, path), { headers: { Accept: 'application/gzip' } });
    return res.blob();
  }
  modelDefinitionPath(experimentId: number) {
    return `/api/v1/experiments/${experimentId}/model_definition`;
  }
  checkpointDownloadPath(uuid: string) {
    return `/api/v1/checkpoints/${encodeURIComponent(uuid)}/download`;
  }
  experimentAction(id: number, action: ExperimentAction) {
    return this.post<Experiment>(`/api/v1/experiments/${id}/${action}`);
  }

  // Trials.
  trial(id: number, signal?: AbortSignal) {
    return this.get<Trial>(`/api/v1/trials/${id}`, undefined, signal);
  }
  trialMetrics(id: number, kind: MetricKind, maxPoints: number, signal?: AbortSignal) {
    return this.get<TrialMetrics>(`/api/v1/trials/${id}/metrics`, { kind, max_points: maxPoints }, signal);
  }
  allocations(trialId: number, signal?: AbortSignal) {
    return this.get<AllocationList>(`/api/v1/trials/${trialId}/allocations`, undefined, signal);
  }
  checkpoints(trialId: number, signal?: AbortSignal) {
    return this.get<CheckpointList>(`/api/v1/trials/${trialId}/checkpoints`, undefined, signal);
  }
  // Log lines after `offset`; with follow, the master holds the request up to
  // 20 s until there is a new line. Not cached: every answer is new.
  async logs(
    trialId: number,
    params: { offset: number; rank?: number | null; follow?: boolean; limit?: number },
    signal?: AbortSignal,
  ): Promise<LogPage> {
    const url = buildUrl(this.base, `/api/v1/trials/${trialId}/logs`, {
      offset: params.offset,
      rank: params.rank ?? undefined,
      follow: params.follow ? 'true' : undefined,
      limit: params.limit,
    });
    const res = await this.send(url, { signal });
    return (await res.json()) as LogPage;
  }

  // The cluster.
  agents(signal?: AbortSignal) {
    return this.get<AgentList>('/api/v1/agents', undefined, signal);
  }
  jobs(signal?: AbortSignal) {
    return this.get<JobList>('/api/v1/jobs', undefined, signal);
  }
  pools(signal?: AbortSignal) {
    return this.get<PoolList>('/api/v1/pools', undefined, signal);
  }

  // Shells: yours (an admin's: everyone's), a new one, ending one, and a
  // one-time ticket that opens its terminal's WebSocket (lib/terminal.ts).
  shells(signal?: AbortSignal) {
    return this.get<ShellList>('/api/v1/shells', undefined, signal);
  }
  startShell(start: TaskStart) {
    return this.post<Shell>('/api/v1/shells', start);
  }
  killShell(id: number) {
    return this.post<Shell>(`/api/v1/shells/${id}/kill`);
  }
  terminalPath(id: number) {
    return `/api/v1/shells/${id}/terminal`;
  }
  terminalTicket(id: number) {
    return this.post<TerminalTicket>(`/api/v1/shells/${id}/terminal/ticket`);
  }

  // Notebooks, the same way; each opens on the task proxy's own origin
  // through a one-time link (proxyLink).
  notebooks(signal?: AbortSignal) {
    return this.get<NotebookList>('/api/v1/notebooks', undefined, signal);
  }
  startNotebook(start: TaskStart) {
    return this.post<Notebook>('/api/v1/notebooks', start);
  }
  killNotebook(id: number) {
    return this.post<Notebook>(`/api/v1/notebooks/${id}/kill`);
  }
  proxyLink(taskId: number) {
    return this.post<ProxyLink>(`/api/v1/tasks/${taskId}/proxy/link`);
  }
}

// The one client of the app: the session's token, and a 401 signs out with
// the master's reason. A new session starts without the last one's answers.
export const api = new ApiClient({
  token: () => currentSession()?.token ?? null,
  onUnauthorized: (error) => endSession(error.message),
});
subscribeSession(() => api.clearCache());
