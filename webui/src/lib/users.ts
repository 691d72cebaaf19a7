// The users page's data: how a linked Unix account reads, and the link form
// checked before it is sent (the master checks again and names the field).
import type { UnixAccount } from '../api/types';

// "alice 1001:1001 (team)", "1001:1001", or "not linked".
export function describeUnix(unix: UnixAccount | null | undefined): string {
  if (!unix) return 'not linked';
  const ids = `${unix.uid}:${unix.gid}`;
  const who = unix.user ? `${unix.user} ${ids}` : ids;
  return unix.group ? `${who} (${unix.group})` : who;
}

export interface UnixForm {
  uid: string;
  gid: string;
  user: string;
  group: string;
}

const MAX_ID = 4294967294;
const UNIX_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,31}$|^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,30}\$$/;

function parseId(text: string, field: string): number | string {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return `${field} must be a whole number`;
  const n = Number(t);
  if (n < 1 || n > MAX_ID) return `${field} must be 1 to ${MAX_ID} (tasks never run as root)`;
  return n;
}

// The account to send, or what is wrong with the form.
export function parseUnixForm(form: UnixForm): { account: UnixAccount } | { error: string } {
  const uid = parseId(form.uid, 'UID');
  if (typeof uid === 'string') return { error: uid };
  const gid = parseId(form.gid, 'GID');
  if (typeof gid === 'string') return { error: gid };
  const user = form.user.trim();
  const group = form.group.trim();
  if (user && !UNIX_NAME.test(user)) return { error: 'Account name must be a Unix name (letters, digits, . _ -)' };
  if (group && !UNIX_NAME.test(group)) return { error: 'Group name must be a Unix name (letters, digits, . _ -)' };
  return { account: { uid, gid, user, group } };
}
