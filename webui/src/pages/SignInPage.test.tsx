import { act, fireEvent, screen } from '@testing-library/react';
import { render } from '../test/render';
import { describe, expect, it, vi } from 'vitest';
import { SESSION_KEY, getSessionState } from '../auth/session';
import { fakeFetch, json } from '../test/fixtures';
import { SignInPage } from './SignInPage';

const ADMIN = { token: 'tok-1', expires_at: '2099-12-01T10:00:00Z', user: { id: 1, username: 'admin', role: 'admin' } };

function fill(username: string, password: string) {
  fireEvent.change(screen.getByLabelText('Username'), { target: { value: username } });
  fireEvent.change(screen.getByLabelText('Password'), { target: { value: password } });
}

async function submit() {
  await act(async () => {
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
  });
}

describe('SignInPage', () => {
  it('is a labelled form that starts in the username field', () => {
    render(<SignInPage reason={null} lastUsername="" />);
    expect(screen.getByRole('heading', { level: 1, name: 'Sign in' })).toBeTruthy();
    expect(document.activeElement).toBe(screen.getByLabelText('Username'));
    expect(screen.getByLabelText('Password').getAttribute('type')).toBe('password');
    expect(screen.getByLabelText('Password').getAttribute('autocomplete')).toBe('current-password');
    expect(document.title).toBe('Sign in · Ringmaster');
  });

  it('signs in and keeps the session', async () => {
    const fake = fakeFetch({ '/api/v1/auth/login': () => json(ADMIN) });
    vi.stubGlobal('fetch', fake.fn);
    render(<SignInPage reason={null} lastUsername="" />);
    fill(' admin ', 's3cret');
    await submit();
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0].url).toBe('/api/v1/auth/login');
    expect(JSON.parse(String(fake.calls[0].init?.body))).toEqual({ username: 'admin', password: 's3cret' });
    expect(getSessionState().session).toEqual({
      token: 'tok-1',
      username: 'admin',
      role: 'admin',
      expires_at: '2099-12-01T10:00:00Z',
    });
    expect(JSON.parse(window.localStorage.getItem(SESSION_KEY)!).token).toBe('tok-1');
  });

  it('says the password is wrong, clears it and puts the cursor back in it', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/auth/login': () =>
          json({ error: { code: 'unauthenticated', message: 'wrong username or password' } }, 401),
      }).fn,
    );
    render(<SignInPage reason={null} lastUsername="" />);
    fill('admin', 'nope');
    await submit();
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toBe('Sign-in failed. Wrong username or password.');
    const password = screen.getByLabelText('Password') as HTMLInputElement;
    expect(password.value).toBe('');
    expect(document.activeElement).toBe(password);
    expect(password.getAttribute('aria-invalid')).toBe('true');
    expect(password.getAttribute('aria-describedby')).toBe(alert.id);
    expect((screen.getByLabelText('Username') as HTMLInputElement).value).toBe('admin');
    expect(getSessionState().session).toBeNull();
  });

  it('says when there were too many attempts, or the master is unreachable', async () => {
    let answer: () => Response = () =>
      json({ error: { code: 'too_many_requests', message: 'too many failed sign-ins; try again in 60 s' } }, 429);
    vi.stubGlobal('fetch', (async () => answer()) as typeof fetch);
    render(<SignInPage reason={null} lastUsername="" />);
    fill('admin', 'guess');
    await submit();
    expect(screen.getByRole('alert').textContent).toBe(
      'Too many attempts. Too many failed sign-ins; try again in 60 s.',
    );

    answer = () => new Response('slow down', { status: 429, statusText: 'Too Many Requests' });
    fill('admin', 'guess');
    await submit();
    expect(screen.getByRole('alert').textContent).toBe('Too many attempts. Wait a few minutes, then try again.');

    answer = () => {
      throw new TypeError('Failed to fetch');
    };
    fill('admin', 'guess');
    await submit();
    expect(screen.getByRole('alert').textContent).toBe(
      'Cannot reach the master. Is it running? Try again in a moment.',
    );
  });

  it('asks for both fields before asking the master', async () => {
    const fake = fakeFetch({});
    vi.stubGlobal('fetch', fake.fn);
    render(<SignInPage reason={null} lastUsername="" />);
    fill('admin', '');
    await submit();
    expect(screen.getByRole('alert').textContent).toContain('Enter your username and password.');
    expect(document.activeElement).toBe(screen.getByLabelText('Password'));
    expect(fake.calls).toHaveLength(0);
  });

  it('says why the session ended and fills in who was signed in', () => {
    render(<SignInPage reason="the token has expired; sign in again" lastUsername="alice" />);
    expect(screen.getByRole('status').textContent).toBe('You were signed out: the token has expired; sign in again.');
    expect((screen.getByLabelText('Username') as HTMLInputElement).value).toBe('alice');
    expect(document.activeElement).toBe(screen.getByLabelText('Password'));
  });
});
