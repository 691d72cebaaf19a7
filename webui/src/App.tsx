// The app shell: a skip link, the header with the pages and the signed-in
// user, and the page of the current route, or the sign-in page in its place
// while nobody is signed in (so signing in returns to that route).
import { useEffect, useRef } from 'react';
import { useSession } from './auth/session';
import { UserMenu } from './components/UserMenu';
import { ClusterPage } from './pages/ClusterPage';
import { ExperimentPage } from './pages/ExperimentPage';
import { ExperimentsPage } from './pages/ExperimentsPage';
import { NotebooksPage } from './pages/NotebooksPage';
import { ShellsPage } from './pages/ShellsPage';
import { SignInPage } from './pages/SignInPage';
import { TrialPage } from './pages/TrialPage';
import { UsersPage } from './pages/UsersPage';
import { Link, matchRoute, paths, useLocation, type Route } from './router';

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'experiments':
      return <ExperimentsPage />;
    case 'experiment':
      return <ExperimentPage key={route.id} id={route.id} />;
    case 'trial':
      return <TrialPage key={route.id} id={route.id} />;
    case 'cluster':
      return <ClusterPage />;
    case 'users':
      return <UsersPage />;
    case 'shells':
      return <ShellsPage />;
    case 'notebooks':
      return <NotebooksPage />;
    default:
      return (
        <section>
          <h1>Page not found</h1>
          <p>
            Nothing lives at <code>{route.path}</code>. Go to the <Link href={paths.experiments()}>experiments</Link> or
            the <Link href={paths.cluster()}>cluster</Link>.
          </p>
        </section>
      );
  }
}

export function App() {
  const { pathname } = useLocation();
  const { session, reason, lastUsername } = useSession();
  const signedIn = session !== null;
  const route = matchRoute(pathname);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  // After a navigation or signing in, move focus to the page so keyboard and
  // screen reader users start at its top (the sign-in page focuses its form).
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    if (signedIn) main.current?.focus({ preventScroll: true });
  }, [pathname, signedIn]);

  const current = (page: Route['page'][]) => (page.includes(route.page) ? 'page' : undefined);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <Link href={paths.experiments()} className="brand" aria-label="Ringmaster home">
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
                <Link href={paths.experiments()} aria-current={current(['experiments', 'experiment', 'trial'])}>
                  Experiments
                </Link>
              </li>
              <li>
                <Link href={paths.shells()} aria-current={current(['shells'])}>
                  Shells
                </Link>
              </li>
              <li>
                <Link href={paths.notebooks()} aria-current={current(['notebooks'])}>
                  Notebooks
                </Link>
              </li>
              <li>
                <Link href={paths.cluster()} aria-current={current(['cluster'])}>
                  Cluster
                </Link>
              </li>
              {session.role === 'admin' && (
                <li>
                  <Link href={paths.users()} aria-current={current(['users'])}>
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
        {session ? <Page route={route} /> : <SignInPage reason={reason} lastUsername={lastUsername} />}
      </main>
    </>
  );
}
