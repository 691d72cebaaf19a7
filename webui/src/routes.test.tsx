import { screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { AppRoutes, sectionOf } from './routes';
import { experiment, fakeFetch, json, signIn } from './test/fixtures';
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
    expect(sectionOf('/cluster')).toBe('cluster');
    expect(sectionOf('/notebooks/')).toBe('notebooks');
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
});
