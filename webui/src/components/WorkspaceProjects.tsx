// A workspace's projects: each with its experiments (a link to the list of
// them), archived or not; its creator, the workspace's ADMINs and admins
// archive, unarchive and delete one (the default project never, a project
// holding experiments not deleted); any member creates one, while the
// workspace is not archived.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, failureText } from '../api/client';
import { keys } from '../api/queries';
import type { Project, Workspace } from '../api/types';
import { useSession } from '../auth/session';
import { DEFAULT_LIST_QUERY, listQueryToSearch } from '../lib/experiments';
import { formatDateTime } from '../lib/format';
import { mayChangeProject, messageAt, projectArchiveBlock, projectDeleteBlock } from '../lib/workspaces';
import { paths } from '../paths';
import { ConfirmButton } from './ConfirmButton';
import { EditNamed } from './EditNamed';
import { Empty } from './DataState';
import { TextField } from './TextField';

export function experimentsOf(p: Pick<Project, 'id' | 'workspace_id'>): string {
  return paths.experiments(listQueryToSearch({ ...DEFAULT_LIST_QUERY, workspace: p.workspace_id, project: p.id }));
}

export function WorkspaceProjects({ workspace: ws, projects }: { workspace: Workspace; projects: Project[] }) {
  const { session } = useSession();
  const queryClient = useQueryClient();
  const changed = () => {
    void queryClient.invalidateQueries({ queryKey: keys.workspaces });
    void queryClient.invalidateQueries({ queryKey: keys.experiments });
  };
  const notYours = 'Only its creator, an ADMIN of this workspace or a cluster admin may change it.';
  return (
    <>
      {projects.length === 0 ? (
        <Empty title="No projects yet." />
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Projects table">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col" className="col-num">
                  Experiments
                </th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {projects.map((p) => {
                const may = mayChangeProject(session, ws, p);
                return (
                  <tr key={p.id} data-project={p.id}>
                    <td>
                      <Link to={experimentsOf(p)} className="strong">
                        {p.name}
                      </Link>
                      {p.default && <span className="chip chip-muted">default</span>}
                      {p.archived && <span className="chip chip-muted">archived</span>}
                    </td>
                    <td>{p.description}</td>
                    <td className="col-num">{p.num_experiments}</td>
                    <td>
                      {formatDateTime(p.created_at)} by {p.created_by}
                    </td>
                    <td>
                      <div className="row-actions">
                        <EditNamed
                          small
                          what="project"
                          named={p}
                          blocked={may ? null : notYours}
                          run={(patch) => api.changeProject(p.id, patch)}
                          onDone={changed}
                        />
                        <ConfirmButton
                          small
                          label={p.archived ? 'Unarchive' : 'Archive'}
                          name={`${p.archived ? 'Unarchive' : 'Archive'} project ${p.name}`}
                          title={`${p.archived ? 'Unarchive' : 'Archive'} project ${p.name}?`}
                          blocked={may ? projectArchiveBlock(p) : notYours}
                          run={() => api.changeProject(p.id, { archived: !p.archived })}
                          onDone={changed}
                        >
                          <p>
                            {p.archived
                              ? 'Experiments can be submitted to it and moved into it again.'
                              : 'It takes no new experiments (submitted or moved) until it is unarchived; its experiments stay.'}
                          </p>
                        </ConfirmButton>
                        <ConfirmButton
                          small
                          danger
                          label="Delete"
                          name={`Delete project ${p.name}`}
                          title={`Delete project ${p.name}?`}
                          blocked={may ? projectDeleteBlock(p) : notYours}
                          run={() => api.deleteProject(p.id)}
                          onDone={changed}
                        >
                          <p>The project goes; only a project without experiments can be deleted.</p>
                        </ConfirmButton>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {ws.archived ? (
        <p className="muted small">The workspace is archived: it takes no new projects until it is unarchived.</p>
      ) : (
        <>
          <h3>New project</h3>
          <CreateProjectForm workspace={ws} onCreated={changed} />
        </>
      )}
    </>
  );
}

function CreateProjectForm({ workspace: ws, onCreated }: { workspace: Workspace; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<Project | null>(null);
  const create = useMutation({
    mutationFn: () => api.createProject(ws.id, { name: name.trim(), description }),
    onSuccess: (p) => {
      onCreated();
      setCreated(p);
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
    <form className="inline-form" aria-label="Create a project" onSubmit={submit}>
      <TextField label="Project name" value={name} onChange={setName} required maxLength={128} error={nameError} />
      <TextField label="Project description" value={description} onChange={setDescription} grow />
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={create.isPending || !name.trim()}>
          {create.isPending ? 'Creating…' : 'Create project'}
        </button>
      </div>
      {create.error && !nameError && (
        <p className="form-error" role="alert">
          {failureText(create.error)}
        </p>
      )}
      {created && (
        <p className="notice" role="status">
          Created project {created.name}.
        </p>
      )}
    </form>
  );
}
