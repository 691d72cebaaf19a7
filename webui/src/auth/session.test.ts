import { describe, expect, it, vi } from 'vitest';
import {
  SESSION_KEY,
  endSession,
  getSessionState,
  parseSession,
  sessionFromLogin,
  startSession,
  subscribeSession,
  type Session,
} from './session';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const alice: Session = { token: 'tok-a', username: 'alice', role: 'user', expires_at: '2099-01-01T00:00:00Z' };

describe('parseSession', () => {
  it('reads a stored session', () => {
    expect(parseSession(JSON.stringify(alice), NOW)).toEqual(alice);
  });

  it('refuses what is missing, malformed, incomplete or expired', () => {
    expect(parseSession(null, NOW)).toBeNull();
    expect(parseSession('{not json', NOW)).toBeNull();
    expect(parseSession('null', NOW)).toBeNull();
    expect(parseSession(JSON.stringify({ ...alice, token: '' }), NOW)).toBeNull();
    expect(parseSession(JSON.stringify({ ...alice, role: undefined }), NOW)).toBeNull();
    expect(parseSession(JSON.stringify({ ...alice, expires_at: 'soon' }), NOW)).toBeNull();
    expect(parseSession(JSON.stringify({ ...alice, expires_at: '2026-06-01T11:59:59Z' }), NOW)).toBeNull();
  });

  it('is made from the login answer', () => {
    expect(
      sessionFromLogin({
        token: 'tok-1',
        expires_at: '2026-12-01T10:00:00Z',
        user: { id: 1, username: 'admin', role: 'admin', active: true, created_at: '2026-01-01T00:00:00Z', unix: null },
      }),
    ).toEqual({ token: 'tok-1', username: 'admin', role: 'admin', expires_at: '2026-12-01T10:00:00Z' });
  });
});

describe('the session store', () => {
  it('keeps the session in localStorage and tells its subscribers', () => {
    const heard = vi.fn();
    const unsubscribe = subscribeSession(heard);
    startSession(alice);
    expect(JSON.parse(window.localStorage.getItem(SESSION_KEY)!)).toEqual(alice);
    expect(getSessionState()).toEqual({ session: alice, reason: null, lastUsername: 'alice' });
    expect(heard).toHaveBeenCalledTimes(1);

    endSession('the token has expired; sign in again');
    expect(window.localStorage.getItem(SESSION_KEY)).toBeNull();
    expect(getSessionState()).toEqual({
      session: null,
      reason: 'the token has expired; sign in again',
      lastUsername: 'alice',
    });
    expect(heard).toHaveBeenCalledTimes(2);
    endSession('the token has expired; sign in again'); // a second 401 of the same poll round
    expect(heard).toHaveBeenCalledTimes(2);
    unsubscribe();
  });

  it('follows another tab signing in and out', () => {
    window.localStorage.setItem(SESSION_KEY, JSON.stringify(alice));
    window.dispatchEvent(new StorageEvent('storage', { key: SESSION_KEY }));
    expect(getSessionState().session).toEqual(alice);
    window.localStorage.removeItem(SESSION_KEY);
    window.dispatchEvent(new StorageEvent('storage', { key: SESSION_KEY }));
    expect(getSessionState()).toEqual({ session: null, reason: null, lastUsername: 'alice' });
  });

  it('starts from the stored session, and says when it has expired', async () => {
    window.localStorage.setItem(SESSION_KEY, JSON.stringify(alice));
    vi.resetModules();
    expect((await import('./session')).getSessionState().session).toEqual(alice);

    window.localStorage.setItem(SESSION_KEY, JSON.stringify({ ...alice, expires_at: '2020-01-01T00:00:00Z' }));
    vi.resetModules();
    expect((await import('./session')).getSessionState()).toEqual({
      session: null,
      reason: 'your session expired',
      lastUsername: 'alice',
    });
  });
});
