// The signed-in user and role in the header, and Sign out. Signing out ends
// the session here at once (the pages unmount and stop polling), then tells
// the master to forget the token; if the master cannot be reached, the
// token still expires on its own.
import { useState } from 'react';
import { api } from '../api/client';
import { endSession, type Session } from '../auth/session';

export function UserMenu({ session }: { session: Session }) {
  const [busy, setBusy] = useState(false);
  const signOut = () => {
    setBusy(true);
    endSession();
    void api.logout(session.token).catch(() => {});
  };
  return (
    <div className="user-menu">
      <span className="whoami">
        <span className="sr-only">Signed in as </span>
        <strong>{session.username}</strong>{' '}
        <span className="role" title="Role">
          {session.role}
        </span>
      </span>
      <button type="button" className="btn btn-small btn-on-dark" onClick={signOut} disabled={busy}>
        Sign out
      </button>
    </div>
  );
}
