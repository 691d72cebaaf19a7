// @vitest-environment node
import { afterEach, describe, expect, it, vi } from 'vitest';
import { currentSession, endSession, getSessionState, startSession } from '../auth/session';
import { fakeFetch, json } from '../test/fixtures';
import { ApiError, api, cleanParams, createApi } from './client';

const headersOf = (init?: RequestInit) => init?.headers as Record<string, string>;
const unauthenticated = (message: string) => json({ error: { code: 'unauthenticated', message } }, 401);

describe('ApiClient', () => {
  it('sends no empty parameters', async () => {
    expect(cleanParams({ limit: 25, owner: '', label: undefined, archived: 'false', rank: null })).toEqual({
      limit: 25,
      archived: 'false',
    });
    const fake = fakeFetch({ '/api/v1/experiments': () => json({ experiments: [], total: 0, facets: {} }) });
    await createApi({ fetch: fake.fn }).experiments({ limit: 25, owner: '', archived: 'false' });
    expect(fake.calls[0].url).toBe('/api/v1/experiments?limit=25&archived=false');
  });

  it('revalidates with the ETag and reuses the answer on 304', async () => {
    let version = 1;
    const fake = fakeFetch({
      '/api/v1/experiments': (_url, init) => {
        const etag = `"v${version}"`;
        const sent = (init?.headers as Record<string, string>)['If-None-Match'];
        if (sent === etag) return json(null, 304, { ETag: etag });
        return json({ experiments: [], total: version }, 200, { ETag: etag });
      },
    });
    const client = createApi({ fetch: fake.fn });
    const first = await client.experiments({});
    expect(first).toEqual({ experiments: [], total: 1 });
    const second = await client.experiments({});
    expect(second).toEqual(first);
    version = 2;
    const third = await client.experiments({});
    expect(third.total).toBe(2);
    expect(fake.calls.map((c) => (c.init?.headers as Record<string, string>)['If-None-Match'])).toEqual([
      undefined,
      '"v1"',
      '"v1"',
    ]);
  });

  it('sends the bearer token when there is one, on every kind of request', async () => {
    const fake = fakeFetch({
      '/api/v1/agents': () => json({ agents: [], total: 0 }, 200, { ETag: '"a1"' }),
      '/api/v1/trials/3/logs': () => json({ logs: [], offset: 0, more: false, trial_state: 'ACTIVE' }),
      '/api/v1/experiments/1/pause': () => json({ id: 1 }),
    });
    const client = createApi({ fetch: fake.fn, token: () => 'secret' });
    await client.agents();
    await client.agents(); // conditional, and still signed
    await client.logs(3, { offset: 0, follow: true });
    await client.experimentAction(1, 'pause');
    await createApi({ fetch: fake.fn }).agents();
    expect(fake.calls.map((c) => headersOf(c.init).Authorization)).toEqual([
      'Bearer secret',
      'Bearer secret',
      'Bearer secret',
      'Bearer secret',
      undefined,
    ]);
    expect(headersOf(fake.calls[1].init)['If-None-Match']).toBe('"a1"');
  });

  it('reports a 401 to the current token as the end of the session', async () => {
    let token: string | null = 'old';
    const ended: ApiError[] = [];
    const fake = fakeFetch({
      '/api/v1/experiments': () => unauthenticated('the token has expired; sign in again'),
      '/api/v1/trials/3/logs': () => unauthenticated('sign in first'),
    });
    const client = createApi({ fetch: fake.fn, token: () => token, onUnauthorized: (e: ApiError) => ended.push(e) });
    await expect(client.experiments({})).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
    await expect(client.logs(3, { offset: 0 })).rejects.toMatchObject({ status: 401 });
    expect(ended.map((e) => e.message)).toEqual(['the token has expired; sign in again', 'sign in first']);

    // A request sent with the old token answers after a new sign-in: the
    // new session stays.
    const slow = fakeFetch({
      '/api/v1/experiments': () => {
        token = 'new';
        return unauthenticated('the token has expired; sign in again');
      },
    });
    token = 'old';
    const late = createApi({ fetch: slow.fn, token: () => token, onUnauthorized: (e: ApiError) => ended.push(e) });
    await expect(late.experiments({})).rejects.toMatchObject({ status: 401 });
    expect(ended).toHaveLength(2);
  });

  it('signs in without a token, and a wrong password does not end a session', async () => {
    const onUnauthorized = vi.fn();
    const fake = fakeFetch({
      '/api/v1/auth/login': (_url, init) => {
        const { password } = JSON.parse(String(init?.body));
        if (password !== 'right')
          return json({ error: { code: 'unauthenticated', message: 'wrong username or password' } }, 401);
        return json({
          token: 'tok',
          expires_at: '2026-12-01T10:00:00Z',
          user: { id: 1, username: 'admin', role: 'admin' },
        });
      },
      '/api/v1/auth/logout': () => json({}),
    });
    const client = createApi({ fetch: fake.fn, token: () => 'stale', onUnauthorized });
    await expect(client.login('admin', 'wrong')).rejects.toMatchObject({
      status: 401,
      message: 'wrong username or password',
    });
    expect(onUnauthorized).not.toHaveBeenCalled();
    const answer = await client.login('admin', 'right');
    expect(answer.user).toEqual({ id: 1, username: 'admin', role: 'admin' });
    expect(fake.calls[1].init?.method).toBe('POST');
    expect(JSON.parse(String(fake.calls[1].init?.body))).toEqual({ username: 'admin', password: 'right' });
    expect(headersOf(fake.calls[1].init).Authorization).toBeUndefined();
    expect(headersOf(fake.calls[1].init)['Content-Type']).toBe('application/json');

    await client.logout('tok');
    expect(fake.calls[2].url).toBe('/api/v1/auth/logout');
    expect(headersOf(fake.calls[2].init).Authorization).toBe('Bearer tok');
  });

  it('turns error bodies and network failures into ApiErrors', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/9/kill': () => json({ error: { code: 'conflict', message: 'experiment 9 has ended' } }, 409),
    });
    const client = createApi({ fetch: fake.fn });
    await expect(client.experimentAction(9, 'kill')).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
      message: 'experiment 9 has ended',
    });
    expect(fake.calls[0].init?.method).toBe('POST');
    const down = createApi({
      fetch: (async () => {
        throw new TypeError('Failed to fetch');
      }) as typeof fetch,
    });
    const err = await down.pools().catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(0);
  });

  it('asks for downsampled metrics', async () => {
    const fake = fakeFetch({ '/api/v1/trials/3/metrics': () => json({ metrics: [], total: 0, downsampled: false }) });
    await createApi({ fetch: fake.fn }).trialMetrics(3, 'training', 1000);
    expect(fake.calls[0].url).toBe('/api/v1/trials/3/metrics?kind=training&max_points=1000');
  });
});

describe("the app's client", () => {
  afterEach(() => endSession());

  it("sends the session's token, and a 401 signs out with the master's reason", async () => {
    const fake = fakeFetch({
      '/api/v1/pools': (_url, init) =>
        headersOf(init).Authorization === 'Bearer tok-1'
          ? json({ pools: [], total: 0 }, 200, { ETag: '"p1"' })
          : unauthenticated('the token has expired; sign in again'),
    });
    vi.stubGlobal('fetch', fake.fn);
    startSession({ token: 'tok-1', username: 'alice', role: 'user', expires_at: '2099-01-01T00:00:00Z' });
    expect((await api.pools()).pools).toEqual([]);
    startSession({ token: 'tok-2', username: 'alice', role: 'user', expires_at: '2099-01-01T00:00:00Z' });
    await expect(api.pools()).rejects.toMatchObject({ status: 401 });
    // The new session started without the old one's cached answers.
    expect(headersOf(fake.calls[1].init)['If-None-Match']).toBeUndefined();
    expect(currentSession()).toBeNull();
    expect(getSessionState()).toMatchObject({
      reason: 'the token has expired; sign in again',
      lastUsername: 'alice',
    });
  });
});
