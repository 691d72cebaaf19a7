// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { fakeFetch, json } from '../test/fixtures';
import { ApiClient, ApiError, buildUrl } from './client';

describe('ApiClient', () => {
  it('builds URLs without empty parameters', () => {
    expect(buildUrl('', '/api/v1/experiments', { limit: 25, owner: '', label: undefined, archived: 'false' })).toBe(
      '/api/v1/experiments?limit=25&archived=false',
    );
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
    const client = new ApiClient({ fetch: fake.fn });
    const first = await client.experiments({});
    expect(first).toEqual({ data: { experiments: [], total: 1 }, changed: true });
    const second = await client.experiments({});
    expect(second.changed).toBe(false);
    expect(second.data).toBe(first.data);
    version = 2;
    const third = await client.experiments({});
    expect(third.changed).toBe(true);
    expect(third.data.total).toBe(2);
    expect(fake.calls.map((c) => (c.init?.headers as Record<string, string>)['If-None-Match'])).toEqual([
      undefined,
      '"v1"',
      '"v1"',
    ]);
  });

  it('sends the bearer token when there is one', async () => {
    const fake = fakeFetch({ '/api/v1/agents': () => json({ agents: [], total: 0 }) });
    await new ApiClient({ fetch: fake.fn, token: () => 'secret' }).agents();
    await new ApiClient({ fetch: fake.fn }).agents();
    expect((fake.calls[0].init?.headers as Record<string, string>).Authorization).toBe('Bearer secret');
    expect((fake.calls[1].init?.headers as Record<string, string>).Authorization).toBeUndefined();
  });

  it('turns error bodies and network failures into ApiErrors', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/9/kill': () => json({ error: { code: 'conflict', message: 'experiment 9 has ended' } }, 409),
    });
    const client = new ApiClient({ fetch: fake.fn });
    await expect(client.experimentAction(9, 'kill')).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
      message: 'experiment 9 has ended',
    });
    expect(fake.calls[0].init?.method).toBe('POST');
    const down = new ApiClient({
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
    await new ApiClient({ fetch: fake.fn }).trialMetrics(3, 'training', 1000);
    expect(fake.calls[0].url).toBe('/api/v1/trials/3/metrics?kind=training&max_points=1000');
  });
});
