// The sign-in form, shown in place of every page while nobody is signed in:
// the URL stays as it was, so signing in lands on the page the user asked
// for (or was on when the session ended). A wrong password, too many
// attempts and an unreachable master each say what happened and what to do.
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { ApiError, api } from '../api/client';
import { sessionFromLogin, startSession } from '../auth/session';

// "wrong username or password" -> "wrong username or password."
function withStop(text: string): string {
  const t = text.trim();
  return t && !/[.!?]$/.test(t) ? `${t}.` : t;
}

// "wrong username or password" -> "Wrong username or password."
function sentence(text: string): string {
  const t = withStop(text);
  return t && t[0].toUpperCase() + t.slice(1);
}

export function signInError(e: unknown): { title: string; detail: string } {
  if (!(e instanceof ApiError)) return { title: 'Could not sign in.', detail: sentence((e as Error).message) };
  // Without a JSON error body the message is only the status line.
  const told = e.code !== 'http_error' ? sentence(e.message) : '';
  if (e.status === 0) return { title: 'Cannot reach the master.', detail: 'Is it running? Try again in a moment.' };
  if (e.status === 401) return { title: 'Sign-in failed.', detail: told || 'Wrong username or password.' };
  if (e.status === 429) return { title: 'Too many attempts.', detail: told || 'Wait a few minutes, then try again.' };
  return { title: 'Could not sign in.', detail: sentence(e.message) };
}

export function SignInPage({ reason, lastUsername }: { reason: string | null; lastUsername: string }) {
  const [username, setUsername] = useState(lastUsername);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ title: string; detail: string } | null>(null);
  const userInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  const errorId = useId();

  useEffect(() => {
    document.title = 'Sign in · Ringmaster';
    (lastUsername ? passwordInput : userInput).current?.focus();
    // Only when the page appears.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    const name = username.trim();
    if (!name || !password) {
      setError({ title: 'Enter your username and password.', detail: '' });
      (name ? passwordInput : userInput).current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const answer = await api.login(name, password);
      startSession(sessionFromLogin(answer)); // the app now shows the page, not this one
    } catch (err) {
      setBusy(false);
      setError(signInError(err));
      setPassword('');
      passwordInput.current?.focus();
    }
  };

  return (
    <section className="sign-in" aria-labelledby="sign-in-title">
      <form className="panel sign-in-form" onSubmit={submit} noValidate>
        <h1 id="sign-in-title">Sign in</h1>
        {reason && (
          <p className="stale" role="status">
            You were signed out: {withStop(reason)}
          </p>
        )}
        <label className="field">
          Username
          <input
            ref={userInput}
            name="username"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? errorId : undefined}
          />
        </label>
        <label className="field">
          Password
          <input
            ref={passwordInput}
            name="password"
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoComplete="current-password"
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? errorId : undefined}
          />
        </label>
        {error && (
          <p className="form-error sign-in-error" role="alert" id={errorId}>
            <strong>{error.title}</strong> {error.detail}
          </p>
        )}
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="muted small">
          On a new cluster, sign in as <code>admin</code> with the password in the master&rsquo;s{' '}
          <code>--admin-password-file</code>, or the one it printed in its log at first start.
        </p>
      </form>
    </section>
  );
}
