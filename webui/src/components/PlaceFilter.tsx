// The experiments list's Workspace and Project filters: the workspaces the
// user sees (an admin: all), then the projects of the one chosen. The
// choices are read once (and again when the window regains focus), so the
// list's polling stays one request.
import { useQuery } from '@tanstack/react-query';
import { queries } from '../api/queries';

export function PlaceFilter({
  workspace,
  project,
  onChange,
}: {
  workspace: number;
  project: number;
  onChange: (next: { workspace: number; project: number }) => void;
}) {
  const workspaces = useQuery({ ...queries.workspaceList({}, 0), staleTime: 30000 });
  const projects = useQuery({ ...queries.workspaceProjects(workspace, 0), staleTime: 30000, enabled: workspace > 0 });
  const wsOptions = workspaces.data?.workspaces ?? [];
  const projectOptions = projects.data?.projects ?? [];
  return (
    <>
      <label className="inline-field">
        Workspace
        <select value={workspace} onChange={(e) => onChange({ workspace: Number(e.target.value), project: 0 })}>
          <option value={0}>Any workspace</option>
          {workspace > 0 && !wsOptions.some((w) => w.id === workspace) && (
            <option value={workspace}>workspace {workspace}</option>
          )}
          {wsOptions.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
              {w.archived ? ' (archived)' : ''}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-field">
        Project
        <select
          value={project}
          disabled={workspace === 0 && project === 0}
          title={workspace === 0 && project === 0 ? 'Choose a workspace first' : undefined}
          onChange={(e) => onChange({ workspace, project: Number(e.target.value) })}
        >
          <option value={0}>Any project</option>
          {project > 0 && !projectOptions.some((p) => p.id === project) && (
            <option value={project}>project {project}</option>
          )}
          {projectOptions.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
              {p.archived ? ' (archived)' : ''}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
