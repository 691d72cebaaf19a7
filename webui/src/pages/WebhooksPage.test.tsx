import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { Webhook, WebhookDelivery } from '../api/types';
import { fakeFetch, json, signIn, workspace } from '../test/fixtures';
import { render } from '../test/render';
import { WebhooksPage, buildTriggers, deliveryOutcome, describeTrigger } from './WebhooksPage';

function webhook(id: number, name: string, over: Partial<Webhook> = {}): Webhook {
  return {
    id,
    name,
    url: `https://hooks.example.com/${name}`,
    type: 'DEFAULT',
    triggers: [{ trigger_type: 'EXPERIMENT_STATE_CHANGE', condition: { state: 'COMPLETED' } }],
    workspace_id: null,
    workspace: null,
    created_by: 'admin',
    created_at: '2026-11-20T10:00:00Z',
    ...over,
  };
}

function delivery(id: number, webhookId: number, over: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    id,
    webhook_id: webhookId,
    event_type: 'EXPERIMENT_STATE_CHANGE',
    state: 'DELIVERED',
    attempts: 1,
    last_status: 200,
    last_error: '',
    created_at: '2026-11-20T11:00:00Z',
    delivered_at: '2026-11-20T11:00:01Z',
    event: {},
    ...over,
  };
}

describe('WebhooksPage helpers', () => {
  it('builds triggers from the chosen states and one pattern a line', () => {
    expect(buildTriggers(['COMPLETED', 'ERROR'], ' disk (full|quota) \n\nOOM\n')).toEqual([
      { trigger_type: 'EXPERIMENT_STATE_CHANGE', condition: { state: 'COMPLETED' } },
      { trigger_type: 'EXPERIMENT_STATE_CHANGE', condition: { state: 'ERROR' } },
      { trigger_type: 'TASK_LOG', condition: { regex: 'disk (full|quota)' } },
      { trigger_type: 'TASK_LOG', condition: { regex: 'OOM' } },
    ]);
    expect(buildTriggers([], '  ')).toEqual([]);
    expect(describeTrigger({ trigger_type: 'TASK_LOG', condition: { regex: 'OOM' } })).toBe('log matches /OOM/');
    expect(deliveryOutcome({ state: 'FAILED', last_status: null, last_error: 'connection refused' })).toBe(
      'connection refused',
    );
    expect(deliveryOutcome({ state: 'FAILED', last_status: 500, last_error: 'HTTP 500' })).toBe('HTTP 500: HTTP 500');
    expect(deliveryOutcome({ state: 'PENDING', last_status: null, last_error: '' })).toBe('not sent yet');
  });
});

describe('WebhooksPage', () => {
  it('lists webhooks with their deliveries; an admin creates, tests and deletes', async () => {
    let hooks = [
      webhook(1, 'done', {
        triggers: [
          { trigger_type: 'EXPERIMENT_STATE_CHANGE', condition: { state: 'COMPLETED' } },
          { trigger_type: 'TASK_LOG', condition: { regex: 'disk full' } },
        ],
      }),
    ];
    const deliveries = [
      delivery(7, 1),
      delivery(6, 1, { state: 'FAILED', attempts: 4, last_status: 503, last_error: 'HTTP 503' }),
    ];
    const fake = fakeFetch({
      '/api/v1/webhooks/1/deliveries': () => json({ deliveries, total: deliveries.length }),
      '/api/v1/webhooks/2/deliveries': () => json({ deliveries: [], total: 0 }),
      '/api/v1/webhooks/1/test': () => {
        const d = delivery(8, 1, {
          event_type: 'TEST',
          state: 'FAILED',
          last_status: null,
          last_error: 'connection refused',
          delivered_at: null,
        });
        deliveries.unshift(d);
        return json(d);
      },
      '/api/v1/webhooks/1': () => {
        hooks = hooks.filter((h) => h.id !== 1);
        return json({ id: 1, deleted: true });
      },
      '/api/v1/webhooks': (_url, init) => {
        if (init?.method === 'POST') {
          const body = JSON.parse(String(init.body));
          if (body.url.includes('evil'))
            return json(
              { error: { code: 'invalid_argument', message: 'url: not on webhooks.allowed_urls (master.yaml)' } },
              400,
            );
          const created = webhook(2, body.name, { url: body.url, type: body.type, triggers: body.triggers });
          hooks.push(created);
          return json({ ...created, secret: 'ab'.repeat(32) }, 201);
        }
        return json({ webhooks: hooks, total: hooks.length });
      },
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    render(<WebhooksPage />);

    const table = await screen.findByRole('region', { name: 'Deliveries of done' });
    const panel = screen.getByRole('region', { name: 'done' });
    expect(panel.textContent).toContain('https://hooks.example.com/done');
    expect(panel.textContent).toContain('experiment Completed');
    expect(panel.textContent).toContain('log matches /disk full/');
    const failed = table.querySelector('tr[data-delivery="6"]') as HTMLElement;
    expect(failed.textContent).toContain('FAILED');
    expect(failed.textContent).toContain('HTTP 503');
    expect(fake.calls.some((c) => c.url === '/api/v1/webhooks/1/deliveries?limit=10')).toBe(true);

    // Send test: the outcome shows, and the new delivery joins the table.
    fireEvent.click(within(panel).getByRole('button', { name: 'Send a test event to done' }));
    expect((await within(panel).findByRole('alert')).textContent).toBe('Test failed (connection refused).');
    await waitFor(() => expect(table.querySelector('tr[data-delivery="8"]')).toBeTruthy());

    // Create: the master's refusal, then the secret, shown once.
    const form = screen.getByRole('form', { name: 'Create a webhook' });
    const submit = within(form).getByRole('button', { name: 'Create webhook' }) as HTMLButtonElement;
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'ops' } });
    fireEvent.change(within(form).getByLabelText('URL'), { target: { value: 'https://evil.example.com/' } });
    expect(submit.disabled).toBe(true);
    fireEvent.click(within(form).getByRole('checkbox', { name: 'Error' }));
    fireEvent.click(within(form).getByRole('checkbox', { name: 'Completed' }));
    fireEvent.click(submit);
    expect((await within(form).findByRole('alert')).textContent).toBe(
      'url: not on webhooks.allowed_urls (master.yaml)',
    );
    fireEvent.change(within(form).getByLabelText('URL'), { target: { value: 'https://hooks.example.com/ops' } });
    fireEvent.change(within(form).getByLabelText('Type'), { target: { value: 'SLACK' } });
    fireEvent.change(within(form).getByLabelText('Log patterns'), { target: { value: 'OOM' } });
    fireEvent.click(submit);
    const status = await within(form).findByRole('status');
    expect(status.textContent).toContain('ab'.repeat(32));
    expect(status.textContent).toContain('it will not be shown again');
    const posts = fake.calls.filter((c) => c.init?.method === 'POST' && c.url === '/api/v1/webhooks');
    expect(JSON.parse(String(posts.at(-1)?.init?.body))).toEqual({
      name: 'ops',
      url: 'https://hooks.example.com/ops',
      type: 'SLACK',
      triggers: [
        { trigger_type: 'EXPERIMENT_STATE_CHANGE', condition: { state: 'COMPLETED' } },
        { trigger_type: 'EXPERIMENT_STATE_CHANGE', condition: { state: 'ERROR' } },
        { trigger_type: 'TASK_LOG', condition: { regex: 'OOM' } },
      ],
    });
    expect(await screen.findByRole('region', { name: 'ops' })).toBeTruthy();

    // Delete, after confirming.
    fireEvent.click(within(panel).getByRole('button', { name: 'Delete webhook done' }));
    const dialog = screen.getByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(screen.queryByRole('region', { name: 'done' })).toBeNull());
    const del = fake.calls.find((c) => c.init?.method === 'DELETE');
    expect(del?.url).toBe('/api/v1/webhooks/1');
  });

  it('shows a user the list and deliveries, without actions', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/webhooks/1/deliveries': () => json({ deliveries: [delivery(1, 1)], total: 1 }),
        '/api/v1/webhooks': () => json({ webhooks: [webhook(1, 'done')], total: 1 }),
      }).fn,
    );
    signIn({ username: 'bob', role: 'user' });
    render(<WebhooksPage />);
    await screen.findByRole('region', { name: 'Deliveries of done' });
    expect(screen.queryByRole('button', { name: /Send a test|Delete/ })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Create a webhook' })).toBeNull();
    expect(screen.getByText(/a workspace’s admins create webhooks that watch only its/)).toBeTruthy();
  });

  it("lets a workspace's ADMIN create, test and delete only that workspace's webhooks", async () => {
    const nlp = workspace({ id: 2, name: 'nlp', members: [{ username: 'ada', role: 'ADMIN' }] });
    const cv = workspace({ id: 3, name: 'cv', members: [{ username: 'ada', role: 'MEMBER' }] });
    const fake = fakeFetch({
      '/api/v1/webhooks/1/deliveries': () => json({ deliveries: [], total: 0 }),
      '/api/v1/webhooks/2/deliveries': () => json({ deliveries: [], total: 0 }),
      '/api/v1/workspaces': () => json({ workspaces: [workspace(), nlp, cv], total: 3 }),
      '/api/v1/webhooks': (_url, init) => {
        if (init?.method === 'POST')
          return json({ ...webhook(3, 'mine'), workspace_id: 2, secret: 'cd'.repeat(32) }, 201);
        return json({
          webhooks: [webhook(1, 'everywhere'), webhook(2, 'nlp-done', { workspace_id: 2, workspace: 'nlp' })],
          total: 2,
        });
      },
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn({ username: 'ada', role: 'user' });
    render(<WebhooksPage />);
    const scoped = await screen.findByRole('region', { name: 'nlp-done' });
    expect(scoped.textContent).toContain('experiments of workspace nlp');
    expect(within(scoped).getByRole('link', { name: 'nlp' }).getAttribute('href')).toBe('/workspaces/2');
    expect(within(scoped).getByRole('button', { name: 'Delete webhook nlp-done' })).toBeTruthy();
    const everywhere = screen.getByRole('region', { name: 'everywhere' });
    expect(everywhere.textContent).toContain('every experiment (cluster-wide)');
    expect(within(everywhere).queryByRole('button')).toBeNull();

    // Only nlp is offered: ada is a MEMBER of cv, and only admins make cluster-wide ones.
    const form = await screen.findByRole('form', { name: 'Create a webhook' });
    const scope = within(form).getByLabelText('Watches') as HTMLSelectElement;
    expect([...scope.options].map((o) => o.textContent)).toEqual(['workspace nlp']);
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'mine' } });
    fireEvent.change(within(form).getByLabelText('URL'), { target: { value: 'https://hooks.example.com/m' } });
    fireEvent.click(within(form).getByRole('checkbox', { name: 'Completed' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Create webhook' }));
    await within(form).findByRole('status');
    const post = fake.calls.find((c) => c.init?.method === 'POST');
    expect(JSON.parse(String(post?.init?.body)).workspace_id).toBe(2);
  });
});
