// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/transport';
import { project, workspace } from '../test/fixtures';
import {
  mayChangeProject,
  mayManageWorkspace,
  membersText,
  messageAt,
  moveTargets,
  placeText,
  projectArchiveBlock,
  projectDeleteBlock,
  roleIn,
  workspaceArchiveBlock,
  workspaceDeleteBlock,
} from './workspaces';

const admin = { username: 'root', role: 'admin' };
const ada = { username: 'ada', role: 'user' };
const bob = { username: 'bob', role: 'user' };
const nlp = workspace({
  id: 2,
  name: 'nlp',
  members: [
    { username: 'ada', role: 'ADMIN' },
    { username: 'bob', role: 'MEMBER' },
  ],
});

describe('workspace rules', () => {
  it("lets its ADMINs and cluster admins manage a workspace, and a project's creator change it", () => {
    expect(roleIn(nlp, 'bob')).toBe('MEMBER');
    expect(roleIn(nlp, 'eve')).toBeNull();
    expect(mayManageWorkspace(admin, nlp)).toBe(true);
    expect(mayManageWorkspace(ada, nlp)).toBe(true);
    expect(mayManageWorkspace(bob, nlp)).toBe(false);
    expect(mayManageWorkspace(null, nlp)).toBe(false);
    expect(mayChangeProject(bob, nlp, { created_by: 'bob' })).toBe(true);
    expect(mayChangeProject(bob, nlp, { created_by: 'ada' })).toBe(false);
    expect(mayChangeProject(ada, nlp, { created_by: 'bob' })).toBe(true);
  });

  it('says why the default ones and projects holding experiments cannot go', () => {
    expect(workspaceArchiveBlock(workspace())).toBe('The default workspace is never archived.');
    expect(workspaceArchiveBlock(nlp)).toBeNull();
    expect(workspaceDeleteBlock(workspace(), [])).toBe('The default workspace is never deleted.');
    expect(
      workspaceDeleteBlock(nlp, [project({ id: 3, name: 'a' }), project({ id: 4, name: 'b', num_experiments: 2 })]),
    ).toBe('Project b holds experiments: move or delete them first.');
    expect(workspaceDeleteBlock(nlp, [project({ id: 3 })])).toBeNull();
    expect(projectArchiveBlock(project())).toBe('The default project is never archived.');
    expect(projectArchiveBlock(project({ id: 3 }))).toBeNull();
    expect(projectDeleteBlock(project())).toBe('The default project is never deleted.');
    expect(projectDeleteBlock(project({ id: 3, num_experiments: 1 }))).toBe(
      'It holds 1 experiment: move or delete them first.',
    );
    expect(projectDeleteBlock(project({ id: 3 }))).toBeNull();
  });

  it('counts members, everyone in the default workspace', () => {
    expect(membersText(workspace())).toBe('everyone');
    expect(membersText(nlp)).toBe('2 members');
    expect(membersText({ ...nlp, members: [{ username: 'ada', role: 'ADMIN' }] })).toBe('1 member');
  });

  it("puts the master's refusal of a name or a username at that field", () => {
    const taken = new ApiError('workspace "nlp" exists already', 409, 'conflict');
    const bad = new ApiError('workspace name must be 1 to 128 characters without "/", got "a/b"', 400, 'x');
    const projectTaken = new ApiError('the workspace has a project "p" already', 409, 'conflict');
    const archived = new ApiError('workspace "nlp" is archived; unarchive it first', 409, 'conflict');
    const noUser = new ApiError('no user named "eve"', 400, 'invalid_argument');
    const denied = new ApiError('only an admin may', 403, 'permission_denied');
    expect(messageAt(taken, 'name')).toBe(taken.message);
    expect(messageAt(bad, 'name')).toBe(bad.message);
    expect(messageAt(projectTaken, 'name')).toBe(projectTaken.message);
    expect(messageAt(archived, 'name')).toBeNull();
    expect(messageAt(noUser, 'username')).toBe(noUser.message);
    expect(messageAt(noUser, 'name')).toBeNull();
    expect(messageAt(denied, 'name')).toBeNull();
    expect(messageAt(new Error('network'), 'name')).toBeNull();
    expect(messageAt(null, 'name')).toBeNull();
  });

  it('offers the projects that take experiments, grouped by workspace', () => {
    const all = [workspace(), nlp, workspace({ id: 3, name: 'old', archived: true })];
    const projects: Record<number, ReturnType<typeof project>[]> = {
      1: [project()],
      2: [project({ id: 5, name: 'bert', workspace_id: 2 }), project({ id: 6, name: 'gone', archived: true })],
      3: [project({ id: 7, workspace_id: 3 })],
    };
    expect(moveTargets(all, (id) => projects[id])).toEqual([
      { workspace: all[0], projects: [projects[1][0]] },
      { workspace: all[1], projects: [projects[2][0]] },
    ]);
    expect(moveTargets(all, () => undefined)).toEqual([]);
    expect(placeText('nlp', 'bert')).toBe('nlp / bert');
    expect(placeText(undefined, undefined)).toBe('');
  });
});
