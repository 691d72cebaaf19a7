// The app shell: a skip link, the header with the pages, and the page of the
// current route.
import { useEffect, useRef } from 'react';
import { ClusterPage } from './pages/ClusterPage';
import { ExperimentPage } from './pages/ExperimentPage';
import { ExperimentsPage } from './pages/ExperimentsPage';
import { TrialPage } from './pages/TrialPage';
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
  const route = matchRoute(pathname);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  // After a navigation, move focus to the page so keyboard and screen reader
  // users start at its top.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus({ preventScroll: true });
  }, [pathname]);

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
        <nav aria-label="Main">
          <ul>
            <li>
              <Link href={paths.experiments()} aria-current={current(['experiments', 'experiment', 'trial'])}>
                Experiments
              </Link>
            </li>
            <li>
              <Link href={paths.cluster()} aria-current={current(['cluster'])}>
                Cluster
              </Link>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}
