import { describe, expect, it } from 'vitest';
import { describeUnix, parseUnixForm } from './users';

describe('describeUnix', () => {
  it('names the account, its ids and group', () => {
    expect(describeUnix(null)).toBe('not linked');
    expect(describeUnix({ uid: 1001, gid: 1002, user: '', group: '' })).toBe('1001:1002');
    expect(describeUnix({ uid: 1001, gid: 1002, user: 'alice', group: 'team' })).toBe('alice 1001:1002 (team)');
  });
});

describe('parseUnixForm', () => {
  it('accepts ids and optional names', () => {
    expect(parseUnixForm({ uid: ' 1001 ', gid: '1002', user: 'alice', group: '' })).toEqual({
      account: { uid: 1001, gid: 1002, user: 'alice', group: '' },
    });
  });
  it('refuses root, ids out of range and bad names, naming the field', () => {
    expect(parseUnixForm({ uid: '0', gid: '1', user: '', group: '' })).toEqual({
      error: 'UID must be 1 to 4294967294 (tasks never run as root)',
    });
    expect(parseUnixForm({ uid: '5', gid: '4294967295', user: '', group: '' })).toHaveProperty('error');
    expect(parseUnixForm({ uid: '5', gid: '-1', user: '', group: '' })).toEqual({
      error: 'GID must be a whole number',
    });
    expect(parseUnixForm({ uid: '5', gid: '5', user: '-rf', group: '' })).toHaveProperty('error');
    expect(parseUnixForm({ uid: '5', gid: '5', user: '', group: 'a b' })).toHaveProperty('error');
  });
});
