// @vitest-environment node
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIST_QUERY,
  availableActions,
  listQueryToParams,
  listQueryToSearch,
  mayChange,
  parseListQuery,
  toggleSort,
} from './experiments';

describe('experiments list query', () => {
  it('round-trips through the URL and leaves defaults out', () => {
    expect(listQueryToSearch(DEFAULT_LIST_QUERY)).toBe('');
    const q = {
      ...DEFAULT_LIST_QUERY,
      state: 'PAUSED' as const,
      label: 'nlp',
      name: 'bert',
      sort: 'name' as const,
      order: 'asc' as const,
      page: 3,
      pageSize: 50,
    };
    const search = listQueryToSearch(q);
    expect(search).toBe('?state=PAUSED&label=nlp&name=bert&sort=name&order=asc&page=3&size=50');
    expect(parseListQuery(search)).toEqual(q);
  });
  it('keeps the archived filter in the URL, reading the old checkbox too', () => {
    expect(listQueryToSearch({ ...DEFAULT_LIST_QUERY, archived: 'only' })).toBe('?archived=only');
    expect(parseListQuery('?archived=only').archived).toBe('only');
    expect(parseListQuery('?archived=true').archived).toBe('show');
    expect(listQueryToSearch({ ...DEFAULT_LIST_QUERY, archived: 'show' })).toBe('?archived=true');
  });
  it('keeps the workspace and project filters in the URL and asks the API for them', () => {
    const q = { ...DEFAULT_LIST_QUERY, workspace: 2, project: 5 };
    expect(listQueryToSearch(q)).toBe('?workspace_id=2&project_id=5');
    expect(parseListQuery('?workspace_id=2&project_id=5')).toEqual(q);
    expect(listQueryToParams(q)).toMatchObject({ workspace_id: 2, project_id: 5 });
    expect(listQueryToParams(DEFAULT_LIST_QUERY).project_id).toBeUndefined();
    expect(parseListQuery('?workspace_id=x&project_id=-1')).toEqual(DEFAULT_LIST_QUERY);
  });
  it('ignores bad URL values', () => {
    expect(parseListQuery('?state=RUNNING&sort=colour&order=up&page=-2&size=7')).toEqual(DEFAULT_LIST_QUERY);
  });
  it('asks the master for one page, archived hidden unless asked', () => {
    expect(listQueryToParams({ ...DEFAULT_LIST_QUERY, page: 3 })).toMatchObject({
      limit: 25,
      offset: 50,
      archived: 'false',
      sort: 'id',
      order: 'desc',
    });
    expect(listQueryToParams({ ...DEFAULT_LIST_QUERY, archived: 'show' }).archived).toBeUndefined();
    expect(listQueryToParams({ ...DEFAULT_LIST_QUERY, archived: 'only' }).archived).toBe('true');
    expect(listQueryToParams({ ...DEFAULT_LIST_QUERY, state: 'STOPPING' }).state).toBe(
      'STOPPING_COMPLETED,STOPPING_CANCELED,STOPPING_ERROR',
    );
  });
  it('flips the order of the same column and starts a new one sensibly', () => {
    const byName = toggleSort({ ...DEFAULT_LIST_QUERY, page: 4 }, 'name');
    expect(byName).toMatchObject({ sort: 'name', order: 'asc', page: 1 });
    expect(toggleSort(byName, 'name').order).toBe('desc');
    expect(toggleSort(byName, 'progress').order).toBe('desc');
  });
  it('offers the actions the state allows', () => {
    expect(availableActions({ state: 'ACTIVE', archived: false })).toEqual(['pause', 'kill']);
    expect(availableActions({ state: 'PAUSED', archived: false })).toEqual(['activate', 'kill']);
    expect(availableActions({ state: 'COMPLETED', archived: false })).toEqual(['archive']);
    expect(availableActions({ state: 'ERROR', archived: true })).toEqual(['unarchive']);
    expect(availableActions({ state: 'STOPPING_CANCELED', archived: false })).toEqual([]);
  });
  it('lets admins change every experiment and others only their own', () => {
    expect(mayChange({ username: 'root', role: 'admin' }, { owner: 'alice' })).toBe(true);
    expect(mayChange({ username: 'alice', role: 'user' }, { owner: 'alice' })).toBe(true);
    expect(mayChange({ username: 'bob', role: 'user' }, { owner: 'alice' })).toBe(false);
    expect(mayChange(null, { owner: 'alice' })).toBe(false);
  });
});
