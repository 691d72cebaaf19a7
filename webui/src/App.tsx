// The app shell: a skip link, the header with the pages and the signed-in
// user, and the page of the current route, or the sign-in page in its place
// while nobody is signed in (so signing in returns to that route).
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Link, useLocation } from 'react-router';
import { subscribeSession, useSession } from './auth/session';
import { UserMenu } from './components/UserMenu';
import { addToComparison } from './lib/compare';
import { SignInPage } from './pages/SignInPage';
import { paths } from './paths';
import { AppRoutes, sectionOf, type Section } from './routes';

export function App() {
  const { pathname, search } = useLocation();
  const { session, reason, lastUsername } = useSession();
  const signedIn = session !== null;
  const section = sectionOf(pathname);
  const queryClient = useQueryClient();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  // Another user's answers are not this one's: a new session starts empty.
  useEffect(() => subscribeSession(() => queryClient.clear()), [queryClient]);

  // After a navigation or signing in, move focus to the page so keyboard and
  // screen reader users start at its top (the sign-in page focuses its form),
  // and show its top. A change of the query alone (a filter) does neither.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    if (!signedIn) return;
    main.current?.focus({ preventScroll: true });
    window.scrollTo?.(0, 0);
  }, [pathname, signedIn]);

  const current = (s: Section) => (s === section ? 'page' : undefined);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <Link to={paths.experiments()} className="brand" aria-label="Ringmaster home">
          <svg viewBox="0 0 32 32" width="22" height="22" aria-hidden="true">
            <circle cx="16" cy="16" r="13" fill="none" stroke="currentColor" strokeWidth="4" />
            <circle cx="16" cy="16" r="5" fill="#e8a33d" />
          </svg>
          Ringmaster
        </Link>
        {session && (
          <nav aria-label="Main">
            <ul>
              <li>
                <Link to={paths.experiments()} aria-current={current('experiments')}>
                  Experiments
                </Link>
              </li>
              <li>
                <Link to={paths.workspaces()} aria-current={current('workspaces')}>
                  Workspaces
                </Link>
              </li>
              <li>
                {/* The tab's latest comparison; on its page, the one shown. */}
                <Link
                  to={section === 'compare' ? paths.compare(search) : paths.compare(addToComparison({}))}
                  aria-current={current('compare')}
                >
                  Compare
                </Link>
              </li>
              <li>
                <Link to={paths.shells()} aria-current={current('shells')}>
                  Shells
                </Link>
              </li>
              <li>
                <Link to={paths.notebooks()} aria-current={current('notebooks')}>
                  Notebooks
                </Link>
              </li>
              <li>
                <Link to={paths.cluster()} aria-current={current('cluster')}>
                  Cluster
                </Link>
              </li>
              <li>
                <Link to={paths.models()} aria-current={current('models')}>
                  Models
                </Link>
              </li>
              <li>
                <Link to={paths.webhooks()} aria-current={current('webhooks')}>
                  Webhooks
                </Link>
              </li>
              <li>
                <Link to={paths.templates()} aria-current={current('templates')}>
                  Templates
                </Link>
              </li>
              {session.role === 'admin' && (
                <li>
                  <Link to={paths.users()} aria-current={current('users')}>
                    Users
                  </Link>
                </li>
              )}
            </ul>
          </nav>
        )}
        {session && <UserMenu session={session} />}
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {session ? <AppRoutes /> : <SignInPage reason={reason} lastUsername={lastUsername} />}
      </main>
    </>
  );
}
