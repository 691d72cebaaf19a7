// Client-side routes on the History API (the master answers every non-API,
// non-file path with index.html). Small on purpose: seven pages and links.
import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

export type Route =
  | { page: 'experiments' }
  | { page: 'experiment'; id: number }
  | { page: 'trial'; id: number }
  | { page: 'cluster' }
  | { page: 'users' }
  | { page: 'shells' }
  | { page: 'notebooks' }
  | { page: 'not-found'; path: string };

export function matchRoute(pathname: string): Route {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/' || path === '/experiments') return { page: 'experiments' };
  if (path === '/cluster') return { page: 'cluster' };
  if (path === '/users') return { page: 'users' };
  if (path === '/shells') return { page: 'shells' };
  if (path === '/notebooks') return { page: 'notebooks' };
  let m = /^\/experiments\/(\d+)$/.exec(path);
  if (m) return { page: 'experiment', id: Number(m[1]) };
  m = /^\/trials\/(\d+)$/.exec(path);
  if (m) return { page: 'trial', id: Number(m[1]) };
  return { page: 'not-found', path: pathname };
}

export const paths = {
  experiments: (search = '') => `/experiments${search}`,
  experiment: (id: number) => `/experiments/${id}`,
  trial: (id: number) => `/trials/${id}`,
  cluster: () => '/cluster',
  users: () => '/users',
  shells: () => '/shells',
  notebooks: () => '/notebooks',
};

const listeners = new Set<() => void>();

export function navigate(to: string, options: { replace?: boolean } = {}) {
  if (to === window.location.pathname + window.location.search) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  listeners.forEach((l) => l());
  if (!options.replace) window.scrollTo?.(0, 0);
}

export interface LocationState {
  pathname: string;
  search: string;
}

export function useLocation(): LocationState {
  const read = () => ({ pathname: window.location.pathname, search: window.location.search });
  const [loc, setLoc] = useState<LocationState>(read);
  useEffect(() => {
    const update = () =>
      setLoc((old) => {
        const now = read();
        return now.pathname === old.pathname && now.search === old.search ? old : now;
      });
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

export function Link({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={handle} {...rest} />;
}
