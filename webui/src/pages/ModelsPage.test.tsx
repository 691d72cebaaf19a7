import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { fakeFetch, json, model, modelVersion, signIn } from '../test/fixtures';
import { render } from '../test/render';
import { ModelPage } from './ModelPage';
import { ModelsPage, modelQueryToSearch, parseModelQuery } from './ModelsPage';

describe('ModelsPage', () => {
  it('keeps its filters in the URL', () => {
    expect(parseModelQuery('?name=mn&label=prod')).toEqual({ name: 'mn', label: 'prod' });
    expect(modelQueryToSearch({ name: '', label: 'prod' })).toBe('?label=prod');
    expect(modelQueryToSearch({ name: '', label: '' })).toBe('');
  });

  it('lists models, filters them by name and label, and creates one', async () => {
    const models = [model('mnist', { labels: ['prod'], num_versions: 2 }), model('quadratic')];
    const fake = fakeFetch({
      '/api/v1/models': (url, init) => {
        if (init?.method === 'POST') {
          const body = JSON.parse(String(init.body));
          if (body.name === 'mnist')
            return json({ error: { code: 'conflict', message: 'model mnist already exists' } }, 409);
          models.push(model(body.name, body));
          return json(models.at(-1), 201);
        }
        const q = new URL(url, 'http://x').searchParams;
        const shown = models.filter(
          (m) => m.name.includes(q.get('name') ?? '') && (!q.get('label') || m.labels.includes(q.get('label')!)),
        );
        return json({ models: shown, total: shown.length });
      },
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    window.history.replaceState(null, '', '/models?label=prod');
    render(<ModelsPage />);
    const table = await screen.findByRole('region', { name: 'Models table' });
    expect(Array.from(table.querySelectorAll('tr[data-model]')).map((r) => r.getAttribute('data-model'))).toEqual([
      'mnist',
    ]);
    expect(within(table).getByRole('link', { name: 'mnist' }).getAttribute('href')).toBe('/models/mnist');
    expect((screen.getByLabelText('Label') as HTMLInputElement).value).toBe('prod');

    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    const filters = screen.getByRole('search', { name: 'Filter models' });
    fireEvent.change(within(filters).getByLabelText('Name'), { target: { value: 'quad' } });
    await waitFor(() => expect(window.location.search).toBe('?name=quad'));
    await waitFor(() =>
      expect(
        screen
          .getByRole('region', { name: 'Models table' })
          .querySelector('tr[data-model]')
          ?.getAttribute('data-model'),
      ).toBe('quadratic'),
    );
    expect(fake.calls.some((c) => c.url === '/api/v1/models?name=quad&limit=200')).toBe(true);

    const form = screen.getByRole('form', { name: 'Create a model' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'mnist' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create model' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('model mnist already exists');
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'svm' } });
    fireEvent.change(within(form).getByLabelText('Labels'), { target: { value: 'a, b' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create model' }));
    expect((await within(form).findByRole('status')).textContent).toBe('Created svm.');
    const posts = fake.calls.filter((c) => c.init?.method === 'POST').map((c) => JSON.parse(String(c.init?.body)));
    expect(posts.at(-1)).toEqual({ name: 'svm', description: '', labels: ['a', 'b'] });
  });
});

describe('ModelPage', () => {
  it("shows each version's checkpoint, where it came from, metadata and notes, and edits the notes", async () => {
    let v1 = modelVersion('mnist', 1, {
      name: 'first',
      notes: 'baseline',
      metadata: { acc: 0.9, data: { split: 'a' } },
    });
    const fake = fakeFetch({
      '/api/v1/models/mnist/versions/1': (_url, init) => {
        v1 = { ...v1, ...JSON.parse(String(init?.body)) };
        return json(v1);
      },
      '/api/v1/models/mnist/versions': () =>
        json({ model: model('mnist', { num_versions: 1, owner: 'admin' }), versions: [v1], total: 1 }),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    render(<ModelPage name="mnist" />);
    expect(await screen.findByRole('heading', { level: 1, name: 'mnist' })).toBeTruthy();
    const row = screen
      .getByRole('region', { name: 'Versions table' })
      .querySelector('tr[data-version="1"]') as HTMLElement;
    expect(within(row).getByRole('link', { name: 'trial 3' }).getAttribute('href')).toBe('/trials/3');
    expect(within(row).getByRole('link', { name: 'experiment 1' }).getAttribute('href')).toBe('/experiments/1');
    expect(row.textContent).toContain('acc: 0.9, data: {"split":"a"}');
    expect(row.textContent).toContain('at 300 batches');
    expect(within(row).getByRole('button', { name: 'Download version 1 of mnist' })).toBeTruthy();

    fireEvent.click(within(row).getByRole('button', { name: 'Edit notes of version 1' }));
    const dialog = screen.getByRole('dialog');
    const notes = within(dialog).getByLabelText('Notes');
    expect(document.activeElement).toBe(notes);
    fireEvent.change(notes, { target: { value: 'promoted' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save notes' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const patch = fake.calls.find((c) => c.init?.method === 'PATCH')!;
    expect(patch.url).toBe('/api/v1/models/mnist/versions/1');
    expect(JSON.parse(String(patch.init?.body))).toEqual({ notes: 'promoted' });
    await waitFor(() => expect(row.textContent).toContain('promoted'));
  });

  it("offers no edits on someone else's model", async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/models/mnist/versions': () =>
          json({ model: model('mnist', { owner: 'carol' }), versions: [modelVersion('mnist', 1)], total: 1 }),
      }).fn,
    );
    signIn({ username: 'bob', role: 'user' });
    render(<ModelPage name="mnist" />);
    await screen.findByRole('region', { name: 'Versions table' });
    expect(screen.queryByRole('button', { name: /Edit notes/ })).toBeNull();
  });
});
