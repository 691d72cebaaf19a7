// Workspaces (docs/rest.md, "Workspaces and projects"): the ones the user
// belongs to (an admin: all), with their members, pools and projects,
// filtered by archived (in the URL); admins create one, and the master's
// refusal of a name shows at the name.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Workspace } from '../api/types';
import { useSession } from '../auth/session';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { TextField } from '../components/TextField';
import { ARCHIVED_FILTERS, type ArchivedFilter } from '../lib/experiments';
import { formatDateTime } from '../lib/format';
import { membersText, messageAt } from '../lib/workspaces';
import { paths } from '../paths';

// ?archived=true (archived too) or only; not archived by default.
export function parseArchived(search: string): ArchivedFilter {
  const a = new URLSearchParams(search).get('archived');
  return a === 'true' ? 'show' : a === 'only' ? 'only' : 'hide';
}

export function archivedToSearch(a: ArchivedFilter): string {
  return a === 'hide' ? '' : `?archived=${a === 'show' ? 'true' : 'only'}`;
}

export function WorkspacesPage() {
  const { session } = useSession();
  const admin = session?.role === 'admin';
  const { search } = useLocation();
  const navigate = useNavigate();
  const archived = parseArchived(search);
  const list = useQuery(
    queries.workspaceList({ archived: archived === 'show' ? undefined : archived === 'only' ? 'true' : 'false' }),
  );
  useEffect(() => {
    document.title = 'Workspaces · Ringmaster';
  }, []);
  const data = list.data;
  return (
    <section aria-labelledby="workspaces-title">
      <div className="page-head">
        <h1 id="workspaces-title">Workspaces</h1>
        {data && (
          <p className="muted">
            {data.total} {data.total === 1 ? 'workspace' : 'workspaces'}
          </p>
        )}
      </div>
      <p className="muted small">
        Every experiment is in a project of a workspace. {admin ? 'You see every workspace.' : 'You see yours.'}
        {admin ? '' : ' Admins create workspaces.'}
      </p>
      <form className="toolbar" role="search" aria-label="Filter workspaces" onSubmit={(e) => e.preventDefault()}>
        <label className="inline-field">
          Archived
          <select
            value={archived}
            onChange={(e) =>
              navigate(paths.workspaces(archivedToSearch(e.target.value as ArchivedFilter)), { replace: true })
            }
          >
            {ARCHIVED_FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <StaleNotice error={data ? list.error : undefined} />
      <section className="panel" aria-labelledby="workspace-list-title">
        <h2 id="workspace-list-title">
          {archived === 'only' ? 'Archived workspaces' : admin ? 'Every workspace' : 'Your workspaces'}
        </h2>
        {list.isPending && <Loading what="workspaces" />}
        {!data && list.error && (
          <ErrorMessage what="workspaces" error={list.error} onRetry={() => void list.refetch()} />
        )}
        {data &&
          (data.workspaces.length === 0 ? (
            <Empty title={archived === 'only' ? 'No archived workspace.' : 'No workspaces.'} />
          ) : (
            <WorkspaceTable workspaces={data.workspaces} />
          ))}
      </section>
      {admin && (
        <section className="panel" aria-labelledby="new-workspace-title">
          <h2 id="new-workspace-title">New workspace</h2>
          <CreateWorkspaceForm />
        </section>
      )}
    </section>
  );
}

function WorkspaceTable({ workspaces }: { workspaces: Workspace[] }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Workspaces table">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Members</th>
            <th scope="col">Pools</th>
            <th scope="col" className="col-num">
              Projects
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {workspaces.map((w) => (
            <tr key={w.id} data-workspace={w.id}>
              <td>
                <Link to={paths.workspace(w.id)} className="strong">
                  {w.name}
                </Link>
                {w.default && <span className="chip chip-muted">default</span>}
                {w.archived && <span className="chip chip-muted">archived</span>}
              </td>
              <td>{w.description}</td>
              <td>{membersText(w)}</td>
              <td>
                {w.pools.map((p) => (
                  <span key={p.pool} className="chip">
                    {p.pool}
                    {p.default ? ' (default)' : ''}
                  </span>
                ))}
              </td>
              <td className="col-num">{w.num_projects}</td>
              <td>
                {formatDateTime(w.created_at)} by {w.created_by}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CreateWorkspaceForm() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<Workspace | null>(null);
  const create = useMutation({
    mutationFn: () => api.createWorkspace({ name: name.trim(), description }),
    onSuccess: (w) => {
      void queryClient.invalidateQueries({ queryKey: keys.workspaces });
      setCreated(w);
      setName('');
      setDescription('');
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCreated(null);
    create.mutate();
  };
  const nameError = messageAt(create.error, 'name');
  return (
    <form className="inline-form" aria-label="Create a workspace" onSubmit={submit}>
      <TextField label="Name" value={name} onChange={setName} required maxLength={128} error={nameError} />
      <TextField label="Description" value={description} onChange={setDescription} grow />
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={create.isPending || !name.trim()}>
          {create.isPending ? 'Creating…' : 'Create workspace'}
        </button>
      </div>
      {create.error && !nameError && (
        <p className="form-error" role="alert">
          {failureText(create.error)}
        </p>
      )}
      {created && (
        <p className="notice" role="status">
          Created <Link to={paths.workspace(created.id)}>{created.name}</Link>; you are its first ADMIN.
        </p>
      )}
    </form>
  );
}
