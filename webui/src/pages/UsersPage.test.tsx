import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { render } from '../test/render';
import { describe, expect, it, vi } from 'vitest';
import type { User } from '../api/types';
import { fakeFetch, json, signIn } from '../test/fixtures';
import { UsersPage } from './UsersPage';

function user(id: number, username: string, over: Partial<User> = {}): User {
  return { id, username, role: 'user', active: true, created_at: '2026-03-01T10:00:00.000Z', unix: null, ...over };
}

// A master holding users in memory: GET lists them, POST adds one, PATCH
// changes one; every request is recorded.
function master(initial: User[]) {
  const users = [...initial];
  const fake = fakeFetch({
    '/api/v1/users/': (url, init) => {
      const id = Number(url.split('/').pop());
      const body = JSON.parse(String(init?.body));
      if (body.password && id === 1 && body.current_password !== 'old-admin-pw')
        return json(
          { error: { code: 'permission_denied', message: 'current_password is not your current password' } },
          403,
        );
      const u = users.find((x) => x.id === id)!;
      if ('active' in body) u.active = body.active;
      if ('unix' in body) u.unix = body.unix;
      return json(u);
    },
    '/api/v1/users': (_url, init) => {
      if (init?.method === 'POST') {
        const body = JSON.parse(String(init.body));
        const u = user(users.length + 1, body.username, { role: body.role });
        users.push(u);
        return json(u, 201);
      }
      return json({ users, total: users.length });
    },
  });
  return { ...fake, users };
}

function row(name: string) {
  return screen.getByText(name, { selector: 'strong' }).closest('tr')!;
}

function patches(calls: { url: string; init?: RequestInit }[]) {
  return calls
    .filter((c) => c.init?.method === 'PATCH')
    .map((c) => ({ url: c.url, body: JSON.parse(String(c.init?.body)) }));
}

describe('UsersPage', () => {
  it('lists users with their role, state and Unix account', async () => {
    signIn();
    const m = master([
      user(1, 'admin', { role: 'admin' }),
      user(2, 'ada', { unix: { uid: 1001, gid: 1002, user: 'ada', group: 'team' } }),
      user(3, 'bob', { active: false }),
    ]);
    vi.stubGlobal('fetch', m.fn);
    render(<UsersPage />);
    expect(await screen.findByText('3 users')).toBeTruthy();
    expect(within(row('ada')).getByText('ada 1001:1002 (team)')).toBeTruthy();
    expect(within(row('bob')).getByText('deactivated')).toBeTruthy();
    expect(within(row('bob')).getByText('not linked')).toBeTruthy();
    // An admin cannot deactivate themself: no button on their own row.
    expect(within(row('admin')).queryByRole('button', { name: /Deactivate/ })).toBeNull();
  });

  it('creates a user, deactivates one and links and unlinks a Unix account', async () => {
    signIn();
    const m = master([user(1, 'admin', { role: 'admin' }), user(2, 'ada')]);
    vi.stubGlobal('fetch', m.fn);
    render(<UsersPage />);
    await screen.findByText('2 users');

    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'carol' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'carol-password' } });
    fireEvent.change(screen.getByLabelText('Role'), { target: { value: 'admin' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Create user' }));
    });
    expect(await screen.findByText('Created carol (admin).')).toBeTruthy();
    const post = m.calls.find((c) => c.init?.method === 'POST')!;
    expect(JSON.parse(String(post.init?.body))).toEqual({
      username: 'carol',
      password: 'carol-password',
      role: 'admin',
    });
    await waitFor(() => expect(screen.getByText('3 users')).toBeTruthy());

    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Deactivate ada' }));
    });
    expect(await screen.findByText('ada is deactivated.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Link Unix account of ada' }));
    const form = screen.getByRole('form', { name: 'Unix account of ada' });
    fireEvent.change(within(form).getByLabelText('UID'), { target: { value: '0' } });
    fireEvent.change(within(form).getByLabelText('GID'), { target: { value: '1002' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Link' }));
    // Root is refused before anything is sent.
    expect(within(form).getByRole('alert').textContent).toMatch(/UID must be 1 to 4294967294/);
    fireEvent.change(within(form).getByLabelText('UID'), { target: { value: '1001' } });
    fireEvent.change(within(form).getByLabelText('Account name (optional)'), { target: { value: 'ada' } });
    await act(async () => {
      fireEvent.click(within(form).getByRole('button', { name: 'Link' }));
    });
    expect(await screen.findByText('ada is linked to ada 1001:1002.')).toBeTruthy();
    await waitFor(() => expect(within(row('ada')).getByText('ada 1001:1002')).toBeTruthy());

    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Unlink ada from its Unix account' }));
    });
    await waitFor(() => expect(within(row('ada')).getByText('not linked')).toBeTruthy());
    expect(patches(m.calls)).toEqual([
      { url: '/api/v1/users/2', body: { active: false } },
      { url: '/api/v1/users/2', body: { unix: { uid: 1001, gid: 1002, user: 'ada', group: '' } } },
      { url: '/api/v1/users/2', body: { unix: null } },
    ]);
  });

  it('resets another user’s password without, and changes one’s own with, the current password', async () => {
    signIn();
    const m = master([user(1, 'admin', { role: 'admin' }), user(2, 'ada')]);
    vi.stubGlobal('fetch', m.fn);
    render(<UsersPage />);
    await screen.findByText('2 users');

    fireEvent.click(screen.getByRole('button', { name: 'Reset password of ada' }));
    const reset = screen.getByRole('form', { name: 'New password for ada' });
    expect(within(reset).queryByLabelText('Current password')).toBeNull();
    fireEvent.change(within(reset).getByLabelText('New password'), { target: { value: 'ada-new-password' } });
    await act(async () => {
      fireEvent.click(within(reset).getByRole('button', { name: 'Save password' }));
    });
    expect(await screen.findByText('The password of ada is changed.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Change password of admin (you)' }));
    const own = screen.getByRole('form', { name: 'New password for admin' });
    fireEvent.change(within(own).getByLabelText('Current password'), { target: { value: 'a-wrong-one' } });
    fireEvent.change(within(own).getByLabelText('New password'), { target: { value: 'admin-new-password' } });
    await act(async () => {
      fireEvent.click(within(own).getByRole('button', { name: 'Save password' }));
    });
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Not allowed: current_password is not your current password',
    );
    expect(patches(m.calls)).toEqual([
      { url: '/api/v1/users/2', body: { password: 'ada-new-password' } },
      { url: '/api/v1/users/1', body: { password: 'admin-new-password', current_password: 'a-wrong-one' } },
    ]);
  });

  it('tells a user who is not an admin that the page is for admins, and asks the master nothing', async () => {
    signIn({ username: 'ada', role: 'user', token: 'tok-ada' });
    const m = master([]);
    vi.stubGlobal('fetch', m.fn);
    render(<UsersPage />);
    expect(screen.getByText('Only admins manage users.')).toBeTruthy();
    await new Promise((r) => setTimeout(r, 20));
    expect(m.calls).toHaveLength(0);
  });
});
