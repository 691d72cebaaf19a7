// The one way the app's requests reach the master: the `fetch` that the typed
// client (openapi-fetch, client.ts) calls. It adds the signed-in user's bearer
// token (none to sign in), makes GETs conditional (the last answer of each URL is kept with its
// ETag and sent back as If-None-Match; a 304 is answered from that copy, so
// polling an unchanged list costs the master and the network almost
// nothing), turns a network failure into an ApiError with status 0 and an
// error answer into an ApiError with the master's message and body, and
// reports a 401 to the token still in use as the end of the session.

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    // The error answer's whole JSON body (a refused config lists its problems there).
    readonly body: unknown = null,
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

export interface TransportOptions {
  // The signed-in user's token, sent as "Authorization: Bearer <token>"
  // unless the request names its own Authorization (signing out).
  token?: () => string | null;
  // A 401 answered the token that is still in use: the session is over.
  onUnauthorized?: (error: ApiError) => void;
  fetch?: typeof fetch;
  maxCachedUrls?: number;
}

export interface Transport {
  fetch: (request: Request) => Promise<Response>;
  // Forgets the cached answers (at sign-out: they were another user's view).
  clearCache: () => void;
}

async function errorFrom(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`.trim();
  let code = 'http_error';
  let body: unknown = null;
  try {
    body = await res.json();
    const e = (body as { error?: { message?: string; code?: string } } | null)?.error;
    if (e?.message) message = e.message;
    if (e?.code) code = e.code;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(message, res.status, code, body);
}

// The origin requests are built on (the page's; a stand-in where there is
// no page, in tests): the transport sends its paths without it.
export const ORIGIN = globalThis.location?.origin ?? 'http://localhost';

function targetOf(url: string): string {
  return url.startsWith(ORIGIN + '/') ? url.slice(ORIGIN.length) : url;
}

// Header names as the master's documentation writes them.
const HEADER_NAMES: Record<string, string> = {
  accept: 'Accept',
  authorization: 'Authorization',
  'content-type': 'Content-Type',
  'if-none-match': 'If-None-Match',
};

export function createTransport(options: TransportOptions = {}): Transport {
  const token = options.token ?? (() => null);
  const onUnauthorized = options.onUnauthorized ?? (() => {});
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const maxCached = options.maxCachedUrls ?? 200;
  const cache = new Map<string, { etag: string; text: string; type: string }>();

  const send = async (request: Request): Promise<Response> => {
    const url = targetOf(request.url);
    const method = request.method.toUpperCase();
    const headers: Record<string, string> = { Accept: 'application/json' };
    request.headers.forEach((value, name) => {
      headers[HEADER_NAMES[name] ?? name] = value;
    });
    // Signing in sends no token (and its 401 means a wrong password).
    const ownToken = 'Authorization' in headers || url.split('?')[0] === '/api/v1/auth/login';
    const sent = 'Authorization' in headers ? headers.Authorization.replace(/^Bearer /, '') : ownToken ? null : token();
    if (!ownToken && sent) headers.Authorization = `Bearer ${sent}`;
    if (method === 'GET' || method === 'DELETE') delete headers['Content-Type'];
    const cached = method === 'GET' ? cache.get(url) : undefined;
    if (cached) headers['If-None-Match'] = cached.etag;
    const body = method === 'GET' || method === 'HEAD' ? undefined : await request.text();

    let res: Response;
    try {
      res = await fetchImpl(url, {
        method,
        headers,
        body: body || undefined,
        signal: request.signal,
        cache: 'no-store',
      });
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw e;
      throw new ApiError('cannot reach the master; is it running?', 0, 'unavailable');
    }
    if (res.status === 304) {
      if (!cached) throw new ApiError('the master answered 304 to an unconditional request', 304, 'http_error');
      cache.delete(url); // most recently used last
      cache.set(url, cached);
      return new Response(cached.text, { status: 200, headers: { 'Content-Type': cached.type } });
    }
    if (!res.ok) {
      const error = await errorFrom(res);
      // A 401 to a token already replaced (a request sent before signing in
      // again) does not end the new session.
      if (res.status === 401 && !ownToken && sent && sent === token()) onUnauthorized(error);
      throw error;
    }
    const etag = method === 'GET' ? res.headers.get('ETag') : null;
    const type = res.headers.get('Content-Type') ?? '';
    if (!etag || !type.startsWith('application/json')) return res;
    const text = await res.text();
    cache.delete(url);
    cache.set(url, { etag, text, type });
    while (cache.size > maxCached) cache.delete(cache.keys().next().value as string);
    return new Response(text, { status: res.status, headers: { 'Content-Type': type, ETag: etag } });
  };

  return { fetch: send, clearCache: () => cache.clear() };
}
