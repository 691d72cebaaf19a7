// User administration, for admins: every user with role, state and linked
// Unix account; a form to create one; and per user, deactivate or activate,
// reset the password, and link or unlink the Unix account their tasks run as
// on agents that switch users. Anyone else is told the page is for admins
// (the master refuses them too). Changing one's own password here asks for
// the current one, as the master does.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { User } from '../api/types';
import { useSession } from '../auth/session';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { formatDateTime } from '../lib/format';
import { describeUnix, parseUnixForm } from '../lib/users';

export function UsersPage() {
  const { session } = useSession();
  const admin = session?.role === 'admin';
  const users = useQuery({ ...queries.users(), enabled: admin });
  const queryClient = useQueryClient();
  const changed = () => void queryClient.invalidateQueries({ queryKey: keys.users });
  useEffect(() => {
    document.title = 'Users · Ringmaster';
  }, []);
  if (!admin)
    return (
      <section aria-labelledby="users-title">
        <h1 id="users-title">Users</h1>
        <Empty title="Only admins manage users.">Ask an admin to create a user or link a Unix account.</Empty>
      </section>
    );
  return (
    <section aria-labelledby="users-title">
      <div className="page-head">
        <h1 id="users-title">Users</h1>
        {users.data && (
          <p className="muted">
            {users.data.total} {users.data.total === 1 ? 'user' : 'users'}
          </p>
        )}
      </div>
      <StaleNotice error={users.data ? users.error : undefined} />
      <section className="panel" aria-labelledby="user-list-title">
        <h2 id="user-list-title">Accounts</h2>
        {users.isPending && <Loading what="users" />}
        {!users.data && users.error && (
          <ErrorMessage what="users" error={users.error} onRetry={() => void users.refetch()} />
        )}
        {users.data && <UserTable users={users.data.users} me={session!.username} onChanged={changed} />}
      </section>
      <section className="panel" aria-labelledby="new-user-title">
        <h2 id="new-user-title">New user</h2>
        <CreateUserForm onCreated={changed} />
      </section>
    </section>
  );
}

type Editing = { id: number; what: 'password' | 'unix' } | null;

function UserTable({ users, me, onChanged }: { users: User[]; me: string; onChanged: () => void }) {
  const [editing, setEditing] = useState<Editing>(null);
  const [busy, setBusy] = useState<number | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  if (users.length === 0) return <Empty title="No users." />;

  const change = async (u: User, patch: Parameters<typeof api.changeUser>[1], done: string) => {
    setBusy(u.id);
    setMessage(null);
    try {
      await api.changeUser(u.id, patch);
      setEditing(null);
      setMessage({ text: done, error: false });
      onChanged();
      return true;
    } catch (e) {
      setMessage({ text: failureText(e), error: true });
      return false;
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      {message && (
        <p className={message.error ? 'form-error' : 'notice'} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Users">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Unix account</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id} data-user={u.username}>
                <td>
                  <strong>{u.username}</strong>
                </td>
                <td>{u.role}</td>
                <td>{u.active ? 'active' : 'deactivated'}</td>
                <td>{describeUnix(u.unix)}</td>
                <td>{formatDateTime(u.created_at)}</td>
                <td>
                  <div className="actions">
                    {u.username !== me && (
                      <button
                        type="button"
                        className={`btn btn-small ${u.active ? 'btn-danger-outline' : ''}`}
                        disabled={busy === u.id}
                        aria-label={`${u.active ? 'Deactivate' : 'Activate'} ${u.username}`}
                        onClick={() =>
                          void change(
                            u,
                            { active: !u.active },
                            `${u.username} ${u.active ? 'is deactivated' : 'may sign in again'}.`,
                          )
                        }
                      >
                        {u.active ? 'Deactivate' : 'Activate'}
                      </button>
                    )}
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={
                        u.username === me ? `Change password of ${me} (you)` : `Reset password of ${u.username}`
                      }
                      onClick={() => setEditing({ id: u.id, what: 'password' })}
                    >
                      {u.username === me ? 'Change password' : 'Reset password'}
                    </button>
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`${u.unix ? 'Change' : 'Link'} Unix account of ${u.username}`}
                      onClick={() => setEditing({ id: u.id, what: 'unix' })}
                    >
                      {u.unix ? 'Change Unix account' : 'Link Unix account'}
                    </button>
                    {u.unix && (
                      <button
                        type="button"
                        className="btn btn-small btn-danger-outline"
                        disabled={busy === u.id}
                        aria-label={`Unlink ${u.username} from its Unix account`}
                        onClick={() =>
                          void change(u, { unix: null }, `${u.username} is no longer linked to a Unix account.`)
                        }
                      >
                        Unlink
                      </button>
                    )}
                  </div>
                  {editing?.id === u.id && editing.what === 'password' && (
                    <PasswordForm
                      user={u}
                      own={u.username === me}
                      busy={busy === u.id}
                      onCancel={() => setEditing(null)}
                      onSave={(patch) => change(u, patch, `The password of ${u.username} is changed.`)}
                    />
                  )}
                  {editing?.id === u.id && editing.what === 'unix' && (
                    <UnixForm
                      user={u}
                      busy={busy === u.id}
                      onCancel={() => setEditing(null)}
                      onSave={(unix) => change(u, { unix }, `${u.username} is linked to ${describeUnix(unix)}.`)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function PasswordForm({
  user,
  own,
  busy,
  onCancel,
  onSave,
}: {
  user: User;
  own: boolean;
  busy: boolean;
  onCancel: () => void;
  onSave: (patch: { password: string; current_password?: string }) => Promise<boolean>;
}) {
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void onSave(own ? { password, current_password: current } : { password });
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label={`New password for ${user.username}`}>
      {own && (
        <label className="field">
          Current password
          <input
            type="password"
            name="current_password"
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
            autoComplete="current-password"
            required
          />
        </label>
      )}
      <label className="field">
        New password
        <input
          type="password"
          name="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="new-password"
          minLength={8}
          required
        />
      </label>
      <div className="actions">
        <button type="submit" className="btn btn-small btn-primary" disabled={busy || !password}>
          Save password
        </button>
        <button type="button" className="btn btn-small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function UnixForm({
  user,
  busy,
  onCancel,
  onSave,
}: {
  user: User;
  busy: boolean;
  onCancel: () => void;
  onSave: (unix: NonNullable<User['unix']>) => Promise<boolean>;
}) {
  const [form, setForm] = useState({
    uid: user.unix ? String(user.unix.uid) : '',
    gid: user.unix ? String(user.unix.gid) : '',
    user: user.unix?.user ?? '',
    group: user.unix?.group ?? '',
  });
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseUnixForm(form);
    if ('error' in parsed) {
      setError(parsed.error);
      return;
    }
    setError(null);
    void onSave(parsed.account);
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label={`Unix account of ${user.username}`} noValidate>
      <label className="field">
        UID
        <input name="uid" inputMode="numeric" value={form.uid} onChange={set('uid')} aria-describedby={errorId} />
      </label>
      <label className="field">
        GID
        <input name="gid" inputMode="numeric" value={form.gid} onChange={set('gid')} aria-describedby={errorId} />
      </label>
      <label className="field">
        Account name (optional)
        <input name="unix_user" value={form.user} onChange={set('user')} spellCheck={false} />
      </label>
      <label className="field">
        Group name (optional)
        <input name="unix_group" value={form.group} onChange={set('group')} spellCheck={false} />
      </label>
      <p id={errorId} className={error ? 'form-error' : 'muted small'} role={error ? 'alert' : undefined}>
        {error ?? 'Agents that switch users run this user’s trials as this uid and gid; never root.'}
      </p>
      <div className="actions">
        <button type="submit" className="btn btn-small btn-primary" disabled={busy}>
          Link
        </button>
        <button type="button" className="btn btn-small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function CreateUserForm({ onCreated }: { onCreated: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<'user' | 'admin'>('user');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setMessage(null);
    try {
      const created = await api.createUser(username.trim(), password, role);
      setMessage({ text: `Created ${created.username} (${created.role}).`, error: false });
      setUsername('');
      setPassword('');
      setRole('user');
      onCreated();
    } catch (err) {
      setMessage({ text: failureText(err), error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Create a user">
      <label className="field">
        Username
        <input
          name="new_username"
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          autoCapitalize="none"
          spellCheck={false}
          required
        />
      </label>
      <label className="field">
        Password
        <input
          name="new_password"
          type="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="new-password"
          minLength={8}
          required
        />
      </label>
      <label className="field">
        Role
        <select name="role" value={role} onChange={(e) => setRole(e.target.value as 'user' | 'admin')}>
          <option value="user">user</option>
          <option value="admin">admin</option>
        </select>
      </label>
      {message && (
        <p className={message.error ? 'form-error' : 'notice'} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      <button type="submit" className="btn btn-primary" disabled={busy || !username.trim() || !password}>
        {busy ? 'Creating…' : 'Create user'}
      </button>
    </form>
  );
}
