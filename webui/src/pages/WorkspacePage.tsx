// One workspace: its projects (each a link to its experiments; create,
// archive, delete), its members with their roles and its bound pools
// (managed by its ADMINs and cluster admins), and archiving or deleting it.
// What the signed-in user may not do is left out or disabled with the
// reason; the master's refusals show where they happen.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Project, Workspace } from '../api/types';
import { useSession } from '../auth/session';
import { ConfirmButton } from '../components/ConfirmButton';
import { ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { EditNamed } from '../components/EditNamed';
import { WorkspaceMembers } from '../components/WorkspaceMembers';
import { WorkspacePools } from '../components/WorkspacePools';
import { WorkspaceProjects } from '../components/WorkspaceProjects';
import { formatDateTime } from '../lib/format';
import {
  mayManageWorkspace,
  membersText,
  roleIn,
  workspaceArchiveBlock,
  workspaceDeleteBlock,
} from '../lib/workspaces';
import { paths } from '../paths';

export function WorkspacePage({ id }: { id: number }) {
  const ws = useQuery(queries.workspace(id));
  const projects = useQuery(queries.workspaceProjects(id));
  useEffect(() => {
    document.title = `${ws.data ? ws.data.name : 'Workspace'} · Ringmaster`;
  }, [ws.data]);

  if (ws.isPending) return <Loading what={`workspace ${id}`} />;
  if (!ws.data)
    return (
      <section>
        <p className="crumbs">
          <Link to={paths.workspaces()}>Workspaces</Link> / {id}
        </p>
        <ErrorMessage what={`workspace ${id}`} error={ws.error} onRetry={() => void ws.refetch()} />
      </section>
    );
  const w = ws.data;
  return (
    <section aria-labelledby="workspace-title">
      <WorkspaceHeader workspace={w} projects={projects.data?.projects} />
      <StaleNotice error={ws.error ?? (projects.data ? projects.error : null)} />
      <section className="panel" aria-labelledby="projects-title">
        <h2 id="projects-title">Projects</h2>
        {projects.isPending && <Loading what="projects" />}
        {!projects.data && projects.error && (
          <ErrorMessage what="projects" error={projects.error} onRetry={() => void projects.refetch()} />
        )}
        {projects.data && <WorkspaceProjects workspace={w} projects={projects.data.projects} />}
      </section>
      <WorkspaceAccess workspace={w} />
    </section>
  );
}

function WorkspaceAccess({ workspace: w }: { workspace: Workspace }) {
  const { session } = useSession();
  const manage = mayManageWorkspace(session, w);
  return (
    <>
      <section className="panel" aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <WorkspaceMembers workspace={w} manage={manage} />
      </section>
      <section className="panel" aria-labelledby="pools-title">
        <h2 id="pools-title">Pools</h2>
        <WorkspacePools workspace={w} manage={manage} />
      </section>
    </>
  );
}

function WorkspaceHeader({ workspace: w, projects }: { workspace: Workspace; projects: Project[] | undefined }) {
  const { session } = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const manage = mayManageWorkspace(session, w);
  const myRole = session ? roleIn(w, session.username) : null;
  const archiveBlock = workspaceArchiveBlock(w);
  const deleteBlock = workspaceDeleteBlock(w, projects);
  const changed = (next: Workspace) => {
    queryClient.setQueryData(keys.workspace(w.id), next);
    void queryClient.invalidateQueries({ queryKey: keys.workspaces });
  };
  const blockText = [archiveBlock, deleteBlock].filter((b, i, all) => b && all.indexOf(b) === i).join(' ');
  return (
    <>
      <p className="crumbs">
        <Link to={paths.workspaces()}>Workspaces</Link> / {w.name}
      </p>
      <div className="page-head">
        <div>
          <h1 id="workspace-title">{w.name}</h1>
          <div className="head-line">
            {w.default && <span className="chip chip-muted">default</span>}
            {w.archived && <span className="chip chip-muted">archived</span>}
            {myRole && <span className="chip">you: {myRole}</span>}
          </div>
        </div>
        {manage && (
          <div className="head-actions">
            <EditNamed what="workspace" named={w} run={(patch) => api.changeWorkspace(w.id, patch)} onDone={changed} />
            <ConfirmButton
              label={w.archived ? 'Unarchive' : 'Archive'}
              name={`${w.archived ? 'Unarchive' : 'Archive'} workspace ${w.name}`}
              title={`${w.archived ? 'Unarchive' : 'Archive'} workspace ${w.name}?`}
              blocked={archiveBlock}
              run={() => api.changeWorkspace(w.id, { archived: !w.archived })}
              onDone={changed}
            >
              <p>
                {w.archived
                  ? 'Its projects take experiments again and its pools open to its members again.'
                  : 'It takes no new projects or experiments and opens no pool until it is unarchived; nothing is deleted.'}
              </p>
            </ConfirmButton>
            <ConfirmButton
              danger
              label="Delete"
              name={`Delete workspace ${w.name}`}
              title={`Delete workspace ${w.name}?`}
              blocked={deleteBlock}
              run={() => api.deleteWorkspace(w.id)}
              onDone={() => {
                void queryClient.invalidateQueries({ queryKey: keys.workspaces });
                navigate(paths.workspaces());
              }}
            >
              <p>
                The workspace goes with its projects, members and pool bindings. Only a workspace whose projects hold no
                experiment can be deleted. This cannot be undone.
              </p>
            </ConfirmButton>
          </div>
        )}
      </div>
      {manage && blockText && <p className="muted small">{blockText}</p>}
      {w.description && <p className="description">{w.description}</p>}
      <dl className="facts">
        <div>
          <dt>Members</dt>
          <dd>{membersText(w)}</dd>
        </div>
        <div>
          <dt>Projects</dt>
          <dd>{w.num_projects}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            {formatDateTime(w.created_at)} by {w.created_by}
          </dd>
        </div>
      </dl>
    </>
  );
}
