// The app's URLs, in one place: routes.tsx matches them, links build them.
// The master answers every one of them with index.html, so each loads
// directly (and the first five pages' URLs are the same as ever).
export const paths = {
  experiments: (search = '') => `/experiments${search}`,
  experiment: (id: number) => `/experiments/${id}`,
  experimentFork: (id: number) => `/experiments/${id}/fork`,
  trial: (id: number) => `/trials/${id}`,
  compare: (search = '') => `/compare${search}`,
  cluster: () => '/cluster',
  users: () => '/users',
  shells: () => '/shells',
  notebooks: () => '/notebooks',
  models: (search = '') => `/models${search}`,
  model: (name: string) => `/models/${encodeURIComponent(name)}`,
  webhooks: () => '/webhooks',
  templates: () => '/templates',
  workspaces: (search = '') => `/workspaces${search}`,
  workspace: (id: number) => `/workspaces/${id}`,
};
