import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { render } from './test/render';
import { describe, expect, it, vi } from 'vitest';
import { App } from './App';
import { SESSION_KEY, getSessionState } from './auth/session';
import { experiment, fakeFetch, json, signIn } from './test/fixtures';

vi.mock('./components/LineChart', () => import('./test/RecordingLineChart'));
// The App reaches the Shells page and its terminal (xterm.js, which jsdom
// cannot draw): mocked as ShellsPage.test.tsx mocks it, since files share
// modules (vite.config.ts).
vi.mock('./components/TerminalView', () => import('./test/RecordingTerminalView'));

const list = { experiments: [experiment()], total: 1, facets: { owners: ['default'], labels: ['demo'] } };
const noPools = { pools: [], total: 0 };

async function signInWith(username: string, password: string) {
  fireEvent.change(screen.getByLabelText('Username'), { target: { value: username } });
  fireEvent.change(screen.getByLabelText('Password'), { target: { value: password } });
  await act(async () => {
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
  });
}

// A master with one user, admin/right, whose tokens can be revoked.
function master(tokens: string[] = []) {
  const valid = new Set<string>(tokens);
  let issued = 0;
  const authorized = (init?: RequestInit) =>
    valid.has(((init?.headers as Record<string, string>).Authorization ?? '').replace('Bearer ', ''));
  const denied = () => json({ error: { code: 'unauthenticated', message: 'sign in first' } }, 401);
  const fake = fakeFetch({
    '/api/v1/auth/login': (_url, init) => {
      if (JSON.parse(String(init?.body)).password !== 'right')
        return json({ error: { code: 'unauthenticated', message: 'wrong username or password' } }, 401);
      const token = `tok-${++issued}`;
      valid.add(token);
      return json({ token, expires_at: '2099-01-01T00:00:00Z', user: { id: 1, username: 'admin', role: 'admin' } });
    },
    '/api/v1/auth/logout': (_url, init) => {
      if (!authorized(init)) return denied();
      valid.delete(((init?.headers as Record<string, string>).Authorization ?? '').replace('Bearer ', ''));
      return json({});
    },
    '/api/v1/experiments': (_url, init) => (authorized(init) ? json(list) : denied()),
    '/api/v1/agents': (_url, init) => (authorized(init) ? json({ agents: [], total: 0 }) : denied()),
    '/api/v1/jobs': (_url, init) => (authorized(init) ? json({ jobs: [], total: 0 }) : denied()),
    '/api/v1/pools': (_url, init) => (authorized(init) ? json(noPools) : denied()),
  });
  return { fake, revokeAll: () => valid.clear() };
}

describe('App and the session', () => {
  it('shows the sign-in page, without asking the API anything, until someone signs in', async () => {
    const { fake } = master();
    vi.stubGlobal('fetch', fake.fn);
    window.history.replaceState(null, '', '/cluster');
    render(<App />);
    expect(screen.getByRole('heading', { level: 1, name: 'Sign in' })).toBeTruthy();
    expect(screen.queryByRole('navigation', { name: 'Main' })).toBeNull();
    expect(fake.calls).toHaveLength(0);

    await signInWith('admin', 'wrong');
    expect(screen.getByRole('alert').textContent).toContain('Wrong username or password.');
    expect(getSessionState().session).toBeNull();

    await signInWith('admin', 'right');
    // The page that was asked for, not the home page.
    expect(await screen.findByRole('heading', { level: 1, name: 'Cluster' })).toBeTruthy();
    expect(window.location.pathname).toBe('/cluster');
    const header = screen.getByRole('banner');
    expect(header.textContent).toContain('Signed in as admin admin');
    const nav = screen.getByRole('navigation', { name: 'Main' });
    expect(within(nav).getByRole('link', { name: 'Users' }).getAttribute('href')).toBe('/users');
    expect(within(nav).getByRole('link', { name: 'Shells' }).getAttribute('href')).toBe('/shells');
    expect(within(nav).getByRole('link', { name: 'Notebooks' }).getAttribute('href')).toBe('/notebooks');
    expect(within(nav).getByRole('link', { name: 'Models' }).getAttribute('href')).toBe('/models');
    expect(within(nav).getByRole('link', { name: 'Webhooks' }).getAttribute('href')).toBe('/webhooks');
    await waitFor(() => expect(fake.calls.some((c) => c.url.startsWith('/api/v1/agents'))).toBe(true));
    for (const call of fake.calls.filter((c) => !c.url.startsWith('/api/v1/auth/')))
      expect((call.init?.headers as Record<string, string>).Authorization).toBe('Bearer tok-1');
  });

  it('goes back to the sign-in page on a 401 and returns to the same page after signing in', async () => {
    const { fake, revokeAll } = master();
    vi.stubGlobal('fetch', fake.fn);
    window.history.replaceState(null, '', '/experiments?label=demo');
    render(<App />);
    await signInWith('admin', 'right');
    expect(await screen.findByText('quadratic-grid')).toBeTruthy();
    expect(window.location.search).toBe('?label=demo');

    revokeAll(); // the token expires; the next page's first request gets a 401
    fireEvent.click(screen.getByRole('link', { name: 'Cluster' }));
    expect(await screen.findByRole('heading', { level: 1, name: 'Sign in' })).toBeTruthy();
    expect(screen.getByRole('status').textContent).toBe('You were signed out: sign in first.');
    expect(window.localStorage.getItem(SESSION_KEY)).toBeNull();
    expect(window.location.pathname).toBe('/cluster');
    expect((screen.getByLabelText('Username') as HTMLInputElement).value).toBe('admin');
    expect(document.activeElement).toBe(screen.getByLabelText('Password'));

    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'right' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    });
    expect(await screen.findByRole('heading', { level: 1, name: 'Cluster' })).toBeTruthy();
    expect(document.activeElement).toBe(screen.getByRole('main'));
  });

  it('signs out: the master forgets the token and the sign-in page shows', async () => {
    const { fake } = master(['tok-x']);
    vi.stubGlobal('fetch', fake.fn);
    const session = signIn({ token: 'tok-x', username: 'alice', role: 'user' });
    render(<App />);
    expect(await screen.findByText('quadratic-grid')).toBeTruthy();
    const header = screen.getByRole('banner');
    expect(header.textContent).toContain('Signed in as alice user');
    // User administration is for admins: not in a user's navigation.
    const nav = screen.getByRole('navigation', { name: 'Main' });
    expect(within(nav).queryByRole('link', { name: 'Users' })).toBeNull();
    await act(async () => {
      fireEvent.click(within(header).getByRole('button', { name: 'Sign out' }));
    });
    expect(screen.getByRole('heading', { level: 1, name: 'Sign in' })).toBeTruthy();
    expect(screen.queryByRole('status')).toBeNull(); // the user asked: no reason to give
    expect(window.localStorage.getItem(SESSION_KEY)).toBeNull();
    const logout = fake.calls.find((c) => c.url === '/api/v1/auth/logout')!;
    expect(logout.init?.method).toBe('POST');
    expect((logout.init?.headers as Record<string, string>).Authorization).toBe(`Bearer ${session.token}`);
  });
});
