// The pages and their URLs (react-router). Pages that take an id get it from
// the URL here, checked to be a number, so a page never sees a bad one. The
// fork editor (CodeMirror), the Templates page (the same editor) and the
// Compare page are loaded only when opened, and the workspace pages when they are visited.
import { lazy, Suspense, type ComponentType } from 'react';
import { Link, Route, Routes, useLocation, useParams } from 'react-router';
import { Loading } from './components/DataState';
import { paths } from './paths';
import { ClusterPage } from './pages/ClusterPage';
import { ExperimentPage } from './pages/ExperimentPage';
import { ExperimentsPage } from './pages/ExperimentsPage';
import { ModelPage } from './pages/ModelPage';
import { ModelsPage } from './pages/ModelsPage';
import { NotebooksPage } from './pages/NotebooksPage';
import { ShellsPage } from './pages/ShellsPage';
import { TrialPage } from './pages/TrialPage';
import { UsersPage } from './pages/UsersPage';
import { WebhooksPage } from './pages/WebhooksPage';

const ForkPage = lazy(() => import('./pages/ForkPage').then((m) => ({ default: m.ForkPage })));
const TemplatesPage = lazy(() => import('./pages/TemplatesPage').then((m) => ({ default: m.TemplatesPage })));
const ComparePage = lazy(() => import('./pages/ComparePage').then((m) => ({ default: m.ComparePage })));
const WorkspacesPage = lazy(() => import('./pages/WorkspacesPage').then((m) => ({ default: m.WorkspacesPage })));
const WorkspacePage = lazy(() => import('./pages/WorkspacePage').then((m) => ({ default: m.WorkspacePage })));

// The part of the app a path belongs to, for the navigation's current page.
export type Section =
  | 'experiments'
  | 'compare'
  | 'shells'
  | 'notebooks'
  | 'cluster'
  | 'models'
  | 'webhooks'
  | 'templates'
  | 'users'
  | 'workspaces'
  | 'other';

export function sectionOf(pathname: string): Section {
  const first = pathname.split('/')[1] ?? '';
  if (first === '' || first === 'experiments' || first === 'trials') return 'experiments';
  if (
    first === 'compare' ||
    first === 'shells' ||
    first === 'notebooks' ||
    first === 'cluster' ||
    first === 'models' ||
    first === 'webhooks' ||
    first === 'templates' ||
    first === 'users' ||
    first === 'workspaces'
  )
    return first;
  return 'other';
}

export function NotFound() {
  const { pathname } = useLocation();
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Nothing lives at <code>{pathname}</code>. Go to the <Link to={paths.experiments()}>experiments</Link> or the{' '}
        <Link to={paths.cluster()}>cluster</Link>.
      </p>
    </section>
  );
}

// A page of one numbered thing (/experiments/7): remounted per id.
function WithId({ page: Page }: { page: ComponentType<{ id: number }> }) {
  const { id = '' } = useParams();
  if (!/^\d+$/.test(id)) return <NotFound />;
  return <Page key={id} id={Number(id)} />;
}

// A model's page (/models/mnist): remounted per name; a name the registry
// could not have is not found.
function WithName({ page: Page }: { page: ComponentType<{ name: string }> }) {
  const { name = '' } = useParams();
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(name) || /^\d+$/.test(name)) return <NotFound />;
  return <Page key={name} name={name} />;
}

export function AppRoutes() {
  return (
    <Routes>
      <Route path="/" element={<ExperimentsPage />} />
      <Route path="/experiments" element={<ExperimentsPage />} />
      <Route path="/experiments/:id" element={<WithId page={ExperimentPage} />} />
      <Route
        path="/experiments/:id/fork"
        element={
          <Suspense fallback={<Loading what="the editor" />}>
            <WithId page={ForkPage} />
          </Suspense>
        }
      />
      <Route path="/trials/:id" element={<WithId page={TrialPage} />} />
      <Route
        path="/compare"
        element={
          <Suspense fallback={<Loading what="the comparison" />}>
            <ComparePage />
          </Suspense>
        }
      />
      <Route path="/cluster" element={<ClusterPage />} />
      <Route path="/users" element={<UsersPage />} />
      <Route path="/shells" element={<ShellsPage />} />
      <Route path="/notebooks" element={<NotebooksPage />} />
      <Route path="/models" element={<ModelsPage />} />
      <Route path="/models/:name" element={<WithName page={ModelPage} />} />
      <Route path="/webhooks" element={<WebhooksPage />} />
      <Route
        path="/templates"
        element={
          <Suspense fallback={<Loading what="templates" />}>
            <TemplatesPage />
          </Suspense>
        }
      />
      <Route
        path="/workspaces"
        element={
          <Suspense fallback={<Loading what="workspaces" />}>
            <WorkspacesPage />
          </Suspense>
        }
      />
      <Route
        path="/workspaces/:id"
        element={
          <Suspense fallback={<Loading what="the workspace" />}>
            <WithId page={WorkspacePage} />
          </Suspense>
        }
      />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}
