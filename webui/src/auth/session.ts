// The signed-in user: the master's token and whom it belongs to, kept in
// localStorage under `ring.session` so a reload or another tab stays signed
// in. This module owns the one session of the app: the API client reads the
// token here, a 401 ends the session (with the master's reason, which the
// sign-in page shows), and tabs follow each other through the storage event.
// Without usable storage (disabled, full) the session lives in memory only.
import { useSyncExternalStore } from 'react';
import type { LoginAnswer } from '../api/types';

export const SESSION_KEY = 'ring.session';

export interface Session {
  token: string;
  username: string;
  role: string;
  expires_at: string; // ISO 8601
}

export interface SessionState {
  session: Session | null;
  // Why the last session ended, when the user did not end it: shown above the sign-in form.
  reason: string | null;
  // Who was signed in last, to fill in the sign-in form.
  lastUsername: string;
}

// A stored session, or null when there is none, it is malformed or it has expired.
export function parseSession(raw: string | null, nowMs: number): Session | null {
  if (!raw) return null;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  const s = v as Partial<Session> | null;
  if (!s || typeof s !== 'object') return null;
  if (typeof s.token !== 'string' || !s.token || typeof s.username !== 'string' || typeof s.role !== 'string')
    return null;
  if (typeof s.expires_at !== 'string' || !(Date.parse(s.expires_at) > nowMs)) return null;
  return { token: s.token, username: s.username, role: s.role, expires_at: s.expires_at };
}

export function sessionFromLogin(answer: LoginAnswer): Session {
  return {
    token: answer.token,
    username: answer.user.username,
    role: answer.user.role,
    expires_at: answer.expires_at,
  };
}

function storage(): Storage | null {
  try {
    return typeof window === 'undefined' ? null : window.localStorage;
  } catch {
    return null;
  }
}

function readStored(): { raw: string | null; session: Session | null } {
  let raw: string | null = null;
  try {
    raw = storage()?.getItem(SESSION_KEY) ?? null;
  } catch {
    // unreadable storage: signed out
  }
  return { raw, session: parseSession(raw, Date.now()) };
}

function initialState(): SessionState {
  const { raw, session } = readStored();
  if (session) return { session, reason: null, lastUsername: session.username };
  // A stored session that has expired says so; a missing one says nothing.
  const expired = raw ? parseSession(raw, -Infinity) : null;
  return {
    session: null,
    reason: expired ? 'your session expired' : null,
    lastUsername: expired?.username ?? '',
  };
}

let state: SessionState = initialState();
const listeners = new Set<() => void>();

function set(next: SessionState) {
  state = next;
  listeners.forEach((l) => l());
}

export function getSessionState(): SessionState {
  return state;
}

export function currentSession(): Session | null {
  return state.session;
}

export function startSession(session: Session) {
  try {
    storage()?.setItem(SESSION_KEY, JSON.stringify(session));
  } catch {
    // kept in memory only
  }
  set({ session, reason: null, lastUsername: session.username });
}

// Ends the session; `reason` is for an end the user did not ask for (a 401).
export function endSession(reason: string | null = null) {
  try {
    storage()?.removeItem(SESSION_KEY);
  } catch {
    // nothing stored
  }
  if (!state.session && state.reason === reason) return;
  set({ session: null, reason, lastUsername: state.session?.username ?? state.lastUsername });
}

// Reads the stored session again (another tab signed in or out).
export function reloadSession() {
  const { session } = readStored();
  if (session?.token === state.session?.token) return;
  set(session ? { session, reason: null, lastUsername: session.username } : { ...state, session: null, reason: null });
}

export function subscribeSession(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useSession(): SessionState {
  return useSyncExternalStore(subscribeSession, getSessionState);
}

if (typeof window !== 'undefined') {
  window.addEventListener('storage', (e) => {
    if (e.key === SESSION_KEY || e.key === null) reloadSession();
  });
}
