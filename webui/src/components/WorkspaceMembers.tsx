// A workspace's members and their roles: its ADMINs and cluster admins add
// a member by username with a role, change a role and remove a member. The
// default workspace holds every user and has no members to manage.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, failureText } from '../api/client';
import { keys } from '../api/queries';
import type { Workspace, WorkspaceRole } from '../api/types';
import { messageAt } from '../lib/workspaces';
import { ConfirmButton } from './ConfirmButton';
import { TextField } from './TextField';

const ROLES: { value: WorkspaceRole; explain: string }[] = [
  { value: 'MEMBER', explain: 'works in it' },
  { value: 'ADMIN', explain: 'also manages it' },
];

export function WorkspaceMembers({ workspace: ws, manage }: { workspace: Workspace; manage: boolean }) {
  const queryClient = useQueryClient();
  const changed = (w: Workspace) => {
    queryClient.setQueryData(keys.workspace(ws.id), w);
    void queryClient.invalidateQueries({ queryKey: keys.workspaces });
  };
  const role = useMutation({
    mutationFn: ({ username, to }: { username: string; to: WorkspaceRole }) => api.setMember(ws.id, username, to),
    onSuccess: changed,
  });
  if (ws.default)
    return <p className="muted small">Every user belongs to the default workspace; it has no members to manage.</p>;
  return (
    <>
      {!manage && (
        <p className="muted small">Only an ADMIN of this workspace or a cluster admin changes its members.</p>
      )}
      {ws.members.length === 0 ? (
        <p className="muted small">No members.</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Members table">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Role</th>
                {manage && (
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {ws.members.map((m) => (
                <tr key={m.username} data-member={m.username}>
                  <td>{m.username}</td>
                  <td>
                    {manage ? (
                      <select
                        aria-label={`Role of ${m.username}`}
                        value={m.role}
                        disabled={role.isPending}
                        onChange={(e) => role.mutate({ username: m.username, to: e.target.value as WorkspaceRole })}
                      >
                        {ROLES.map((r) => (
                          <option key={r.value} value={r.value}>
                            {r.value}
                          </option>
                        ))}
                      </select>
                    ) : (
                      m.role
                    )}
                  </td>
                  {manage && (
                    <td>
                      <ConfirmButton
                        small
                        danger
                        label="Remove"
                        name={`Remove ${m.username} from ${ws.name}`}
                        title={`Remove ${m.username} from workspace ${ws.name}?`}
                        run={() => api.removeMember(ws.id, m.username)}
                        onDone={changed}
                      >
                        <p>
                          {m.username} no longer sees the workspace or submits to its projects and pools; their
                          experiments stay where they are.
                        </p>
                      </ConfirmButton>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {role.error && (
        <p className="form-error" role="alert">
          {failureText(role.error)}
        </p>
      )}
      {manage && (
        <>
          <h3>Add a member</h3>
          <AddMemberForm workspace={ws} onAdded={changed} />
        </>
      )}
    </>
  );
}

function AddMemberForm({ workspace: ws, onAdded }: { workspace: Workspace; onAdded: (w: Workspace) => void }) {
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<WorkspaceRole>('MEMBER');
  const add = useMutation({
    mutationFn: () => api.setMember(ws.id, username.trim(), role),
    onSuccess: (w) => {
      onAdded(w);
      setUsername('');
      setRole('MEMBER');
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate();
  };
  const userError = messageAt(add.error, 'username');
  return (
    <form className="inline-form" aria-label="Add a member" onSubmit={submit}>
      <TextField label="Username" value={username} onChange={setUsername} required maxLength={64} error={userError} />
      <label className="field">
        Role
        <select value={role} onChange={(e) => setRole(e.target.value as WorkspaceRole)}>
          {ROLES.map((r) => (
            <option key={r.value} value={r.value}>
              {r.value} ({r.explain})
            </option>
          ))}
        </select>
      </label>
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={add.isPending || !username.trim()}>
          {add.isPending ? 'Adding…' : 'Add member'}
        </button>
      </div>
      {add.error && !userError && (
        <p className="form-error" role="alert">
          {failureText(add.error)}
        </p>
      )}
    </form>
  );
}
