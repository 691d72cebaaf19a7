import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { checkpoint, fakeFetch, json, model, modelVersion, signIn } from '../test/fixtures';
import { render } from '../test/render';
import { RegisterVersion } from './RegisterVersion';

const uuid = '0f1e2d3c-4b5a-4968-8776-655443322110';

describe('RegisterVersion', () => {
  it('creates a new model and registers the checkpoint as its version, then opens the model', async () => {
    const fake = fakeFetch({
      '/api/v1/models/best-quad/versions': () => json(modelVersion('best-quad', 1, { checkpoint_uuid: uuid }), 201),
      '/api/v1/models': (_url, init) =>
        init?.method === 'POST'
          ? json(model('best-quad'), 201)
          : json({ models: [model('mnist', { owner: 'bob' }), model('other', { owner: 'carol' })], total: 2 }),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn({ username: 'bob', role: 'user' });
    render(<RegisterVersion checkpoint={checkpoint(uuid)} />);
    fireEvent.click(screen.getByRole('button', { name: `Register checkpoint ${uuid} as a model version` }));
    const dialog = screen.getByRole('dialog');
    // Only bob's own models can take his versions.
    const select = within(dialog).getByLabelText('Model') as HTMLSelectElement;
    await waitFor(() => expect(select.options).toHaveLength(2));
    expect(Array.from(select.options).map((o) => o.textContent)).toEqual(['A new model…', 'mnist (0 versions)']);

    fireEvent.click(within(dialog).getByRole('button', { name: 'Register' }));
    expect(within(dialog).getByRole('alert').textContent).toBe("Name the new model, or pick one you've made.");
    fireEvent.change(within(dialog).getByLabelText("New model's name"), { target: { value: 'best-quad' } });
    fireEvent.change(within(dialog).getByLabelText('Notes (optional)'), { target: { value: 'the best' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Register' }));
    await waitFor(() => expect(window.location.pathname).toBe('/models/best-quad'));
    const posts = fake.calls.filter((c) => c.init?.method === 'POST');
    expect(posts.map((c) => [c.url, JSON.parse(String(c.init?.body))])).toEqual([
      ['/api/v1/models', { name: 'best-quad' }],
      ['/api/v1/models/best-quad/versions', { checkpoint_uuid: uuid, notes: 'the best' }],
    ]);
  });

  it("adds to an existing model and shows the master's refusal", async () => {
    const fake = fakeFetch({
      '/api/v1/models/mnist/versions': () =>
        json({ error: { code: 'conflict', message: `checkpoint ${uuid} was garbage collected` } }, 409),
      '/api/v1/models': () => json({ models: [model('mnist')], total: 1 }),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    render(<RegisterVersion checkpoint={checkpoint(uuid)} />);
    fireEvent.click(screen.getByRole('button', { name: /Register checkpoint/ }));
    const dialog = screen.getByRole('dialog');
    const select = within(dialog).getByLabelText('Model') as HTMLSelectElement;
    await waitFor(() => expect(select.options).toHaveLength(2));
    fireEvent.change(select, { target: { value: 'mnist' } });
    expect(within(dialog).queryByLabelText("New model's name")).toBeNull();
    fireEvent.change(within(dialog).getByLabelText('Version name (optional)'), { target: { value: 'v-best' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Register' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe(`checkpoint ${uuid} was garbage collected`);
    const post = fake.calls.find((c) => c.init?.method === 'POST')!;
    expect(JSON.parse(String(post.init?.body))).toEqual({ checkpoint_uuid: uuid, name: 'v-best' });
  });
});
