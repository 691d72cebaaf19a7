// Workspaces and projects (docs/rest.md, "Workspaces and projects"): who may
// do what, as the master decides it, so the pages offer only what it would
// allow (and say why not); the master's refusals shown at the field they
// concern; the experiments list of one project; the projects an experiment
// may move to.
import { ApiError } from '../api/transport';
import type { Project, Workspace, WorkspaceRole } from '../api/types';

type User = { username: string; role: string } | null;

export function roleIn(ws: Pick<Workspace, 'members'>, username: string): WorkspaceRole | null {
  return ws.members.find((m) => m.username === username)?.role ?? null;
}

// Members, pools, archiving and deleting: the workspace's ADMINs and cluster admins.
export function mayManageWorkspace(user: User, ws: Pick<Workspace, 'members'>): boolean {
  if (!user) return false;
  return user.role === 'admin' || roleIn(ws, user.username) === 'ADMIN';
}

// Renaming, archiving and deleting a project: also its creator.
export function mayChangeProject(user: User, ws: Pick<Workspace, 'members'>, p: Pick<Project, 'created_by'>): boolean {
  if (!user) return false;
  return mayManageWorkspace(user, ws) || p.created_by === user.username;
}

// Why a workspace cannot be archived or deleted, or null when it can.
export function workspaceArchiveBlock(ws: Pick<Workspace, 'default'>): string | null {
  return ws.default ? 'The default workspace is never archived.' : null;
}

export function workspaceDeleteBlock(
  ws: Pick<Workspace, 'default'>,
  projects: Pick<Project, 'name' | 'num_experiments'>[] | undefined,
): string | null {
  if (ws.default) return 'The default workspace is never deleted.';
  const busy = projects?.find((p) => p.num_experiments > 0);
  if (busy) return `Project ${busy.name} holds experiments: move or delete them first.`;
  return null;
}

export function projectArchiveBlock(p: Pick<Project, 'default'>): string | null {
  return p.default ? 'The default project is never archived.' : null;
}

export function projectDeleteBlock(p: Pick<Project, 'default' | 'num_experiments'>): string | null {
  if (p.default) return 'The default project is never deleted.';
  if (p.num_experiments > 0)
    return `It holds ${p.num_experiments} ${p.num_experiments === 1 ? 'experiment' : 'experiments'}: move or delete them first.`;
  return null;
}

// "3 members", or "everyone" for the default workspace (it holds every user
// without membership rows).
export function membersText(ws: Pick<Workspace, 'default' | 'members'>): string {
  if (ws.default) return 'everyone';
  const n = ws.members.length;
  return `${n} ${n === 1 ? 'member' : 'members'}`;
}

// The master's refusal of a form, when it concerns one field: the name
// ("workspace name must be 1 to 128 characters…", "workspace "x" exists
// already", "the workspace has a project "x" already") or the username
// ("no user named "x""). Anything else is the form's.
export type FormField = 'name' | 'username';

export function messageAt(error: unknown, field: FormField): string | null {
  if (!(error instanceof ApiError) || (error.status !== 400 && error.status !== 409)) return null;
  const m = error.message;
  if (field === 'name' && (/\bname\b/.test(m) || /exists already|" already$/.test(m))) return m;
  if (field === 'username' && /no user named/.test(m)) return m;
  return null;
}

// "ws / project", as experiments name where they are.
export function placeText(workspace: string | undefined, project: string | undefined): string {
  return workspace && project ? `${workspace} / ${project}` : (project ?? '');
}

// The projects an experiment may move to: those that are not archived, in
// workspaces that are not archived, grouped by workspace.
export interface ProjectGroup {
  workspace: Pick<Workspace, 'id' | 'name'>;
  projects: Pick<Project, 'id' | 'name'>[];
}

export function moveTargets(
  workspaces: Pick<Workspace, 'id' | 'name' | 'archived'>[],
  projectsOf: (workspaceId: number) => Pick<Project, 'id' | 'name' | 'archived'>[] | undefined,
): ProjectGroup[] {
  const groups: ProjectGroup[] = [];
  for (const w of workspaces) {
    if (w.archived) continue;
    const projects = (projectsOf(w.id) ?? []).filter((p) => !p.archived);
    if (projects.length) groups.push({ workspace: w, projects });
  }
  return groups;
}
