import { screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { AppRoutes, sectionOf } from './routes';
import { experiment, fakeFetch, json, model, signIn, workspace } from './test/fixtures';
import { render } from './test/render';

vi.mock('./components/LineChart', () => import('./test/RecordingLineChart'));
vi.mock('./components/TerminalView', () => import('./test/RecordingTerminalView'));
vi.mock('./components/YamlEditor', () => import('./test/RecordingYamlEditor'));

function at(path: string) {
  window.history.replaceState(null, '', path);
  return render(<AppRoutes />);
}

describe('routes', () => {
  it('puts each page in its part of the navigation', () => {
    expect(sectionOf('/')).toBe('experiments');
    expect(sectionOf('/experiments/42/fork')).toBe('experiments');
    expect(sectionOf('/trials/7')).toBe('experiments');
    expect(sectionOf('/compare')).toBe('compare');
    expect(sectionOf('/cluster')).toBe('cluster');
    expect(sectionOf('/notebooks/')).toBe('notebooks');
    expect(sectionOf('/models/mnist')).toBe('models');
    expect(sectionOf('/webhooks')).toBe('webhooks');
    expect(sectionOf('/templates')).toBe('templates');
    expect(sectionOf('/workspaces/3')).toBe('workspaces');
    expect(sectionOf('/nowhere')).toBe('other');
  });

  it('answers an unknown path or a malformed id with the page-not-found page', async () => {
    at('/experiments/x');
    expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
    expect(screen.getByText('/experiments/x')).toBeTruthy();
  });

  it('opens the pages by their URLs, the fork editor included', async () => {
    signIn();
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/templates': () => json({ templates: [], total: 0 }),
        '/api/v1/experiments/5': () => json(experiment({ id: 5, config: 'name: five\n' })),
      }).fn,
    );
    at('/experiments/5/fork');
    expect(await screen.findByRole('heading', { level: 1, name: 'Fork experiment 5' })).toBeTruthy();
  });

  it("opens a model's page by its name, and no name the registry refuses", async () => {
    signIn();
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/models/mnist.v2/versions': () => json({ model: model('mnist.v2'), versions: [], total: 0 }),
      }).fn,
    );
    at('/models/mnist.v2');
    expect(await screen.findByRole('heading', { level: 1, name: 'mnist.v2' })).toBeTruthy();
    expect(screen.getByText('No versions yet.')).toBeTruthy();
  });

  it('answers a model name of digits only with the page-not-found page', () => {
    at('/models/123');
    expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
  });

  it('opens a workspace by its id', async () => {
    signIn();
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/workspaces/3/projects': () => json({ projects: [], total: 0 }),
        '/api/v1/workspaces/3': () => json(workspace({ id: 3, name: 'vision' })),
      }).fn,
    );
    at('/workspaces/3');
    expect(await screen.findByRole('heading', { level: 1, name: 'vision' })).toBeTruthy();
    at('/workspaces/x');
    expect(screen.getByRole('heading', { name: 'Page not found' })).toBeTruthy();
  });
});
