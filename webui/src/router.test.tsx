import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Link, matchRoute } from './router';

describe('router', () => {
  it('matches the pages', () => {
    expect(matchRoute('/')).toEqual({ page: 'experiments' });
    expect(matchRoute('/experiments/')).toEqual({ page: 'experiments' });
    expect(matchRoute('/experiments/42')).toEqual({ page: 'experiment', id: 42 });
    expect(matchRoute('/trials/7')).toEqual({ page: 'trial', id: 7 });
    expect(matchRoute('/cluster')).toEqual({ page: 'cluster' });
    expect(matchRoute('/users')).toEqual({ page: 'users' });
    expect(matchRoute('/shells')).toEqual({ page: 'shells' });
    expect(matchRoute('/notebooks/')).toEqual({ page: 'notebooks' });
    expect(matchRoute('/experiments/x')).toEqual({ page: 'not-found', path: '/experiments/x' });
  });
  it('navigates in place on a plain click only', () => {
    render(<Link href="/cluster">Cluster</Link>);
    const link = screen.getByRole('link', { name: 'Cluster' });
    fireEvent.click(link, { ctrlKey: true });
    expect(window.location.pathname).toBe('/');
    fireEvent.click(link);
    expect(window.location.pathname).toBe('/cluster');
  });
});
