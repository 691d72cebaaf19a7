import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { Template } from '../api/types';
import { fakeFetch, json, signIn } from '../test/fixtures';
import { render } from '../test/render';
import { TemplatesPage, validTemplateName } from './TemplatesPage';

vi.mock('../components/YamlEditor', () => import('../test/RecordingYamlEditor'));

function template(name: string, over: Partial<Template> = {}): Template {
  return {
    name,
    config: 'max_restarts: 7\n',
    owner: 'admin',
    created_at: '2026-11-20T10:00:00Z',
    updated_at: '2026-11-20T10:00:00Z',
    ...over,
  };
}

// A master that keeps templates in memory, refusing a config that is not a map.
function master(initial: Template[]) {
  let templates = [...initial];
  const fake = fakeFetch({
    '/api/v1/templates': (url, init) => {
      const name = decodeURIComponent(url.split('/api/v1/templates')[1].replace(/^\//, '').split('?')[0]);
      if (name === '') return json({ templates, total: templates.length });
      const found = templates.find((t) => t.name === name);
      if (init?.method === 'PUT') {
        const { config } = JSON.parse(String(init.body));
        if (config.startsWith('-'))
          return json({ error: { code: 'invalid_argument', message: 'config: line 1: not a YAML map' } }, 400);
        const saved = template(name, { config, owner: found?.owner ?? 'admin', updated_at: '2026-11-21T09:00:00Z' });
        templates = [...templates.filter((t) => t.name !== name), saved].sort((a, b) => a.name.localeCompare(b.name));
        return json(saved, found ? 200 : 201);
      }
      if (init?.method === 'DELETE') {
        templates = templates.filter((t) => t.name !== name);
        return json({ name, deleted: true });
      }
      return found ? json(found) : json({ error: { code: 'not_found', message: `no template ${name}` } }, 404);
    },
  });
  vi.stubGlobal('fetch', fake.fn);
  return fake;
}

describe('validTemplateName', () => {
  it('takes what the master takes', () => {
    expect(validTemplateName('team-default_1.2')).toBe(true);
    expect(validTemplateName('')).toBe(false);
    expect(validTemplateName('a b')).toBe(false);
    expect(validTemplateName('x'.repeat(65))).toBe(false);
  });
});

describe('TemplatesPage', () => {
  it('lists templates, shows one, creates one, edits and deletes', async () => {
    const fake = master([template('team'), template('theirs', { owner: 'eve', config: 'labels: [eve]\n' })]);
    signIn();
    render(<TemplatesPage />);

    const table = await screen.findByRole('region', { name: 'Template list' });
    expect(table.querySelector('tr[data-template="team"]')?.textContent).toContain('admin');
    expect(table.querySelector('tr[data-template="theirs"]')?.textContent).toContain('eve');

    // Show: the stored config.
    fireEvent.click(within(table).getByRole('button', { name: 'Show template theirs' }));
    expect((await screen.findByLabelText('Config of template theirs')).textContent).toBe('labels: [eve]\n');
    expect(fake.calls.some((c) => c.url === '/api/v1/templates/theirs')).toBe(true);

    // Create: the master's refusal, then a PUT that saves it.
    const form = screen.getByRole('form', { name: 'Save a template' });
    const submit = within(form).getByRole('button', { name: 'Save template' }) as HTMLButtonElement;
    expect(submit.disabled).toBe(true); // no name yet
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'gpu' } });
    fireEvent.change(within(form).getByLabelText('Template config (YAML)'), { target: { value: '- a list\n' } });
    fireEvent.click(submit);
    expect((await within(form).findByRole('alert')).textContent).toBe('config: line 1: not a YAML map');
    fireEvent.change(within(form).getByLabelText('Template config (YAML)'), {
      target: { value: 'resources:\n  slots_per_trial: 2\n' },
    });
    fireEvent.click(submit);
    expect((await within(form).findByRole('status')).textContent).toBe('Template gpu saved.');
    const puts = fake.calls.filter((c) => c.init?.method === 'PUT');
    expect(puts.at(-1)?.url).toBe('/api/v1/templates/gpu');
    expect(JSON.parse(String(puts.at(-1)?.init?.body))).toEqual({ config: 'resources:\n  slots_per_trial: 2\n' });
    await waitFor(() => expect(table.querySelector('tr[data-template="gpu"]')).toBeTruthy());
    expect((await screen.findByLabelText('Config of template gpu')).textContent).toBe(
      'resources:\n  slots_per_trial: 2\n',
    );

    // Edit: the editor starts from the template, the name stays.
    fireEvent.click(within(table).getByRole('button', { name: 'Edit template team' }));
    const editing = screen.getByRole('form', { name: 'Save a template' });
    expect((within(editing).getByLabelText('Name') as HTMLInputElement).value).toBe('team');
    expect((within(editing).getByLabelText('Name') as HTMLInputElement).readOnly).toBe(true);
    const editor = within(editing).getByLabelText('Template config (YAML)') as HTMLTextAreaElement;
    expect(editor.value).toBe('max_restarts: 7\n');
    fireEvent.change(editor, { target: { value: 'max_restarts: 3\n' } });
    fireEvent.click(within(editing).getByRole('button', { name: 'Save changes' }));
    await within(editing).findByRole('status');
    expect(JSON.parse(String(fake.calls.filter((c) => c.init?.method === 'PUT').at(-1)?.init?.body))).toEqual({
      config: 'max_restarts: 3\n',
    });

    // Delete, after confirming.
    fireEvent.click(within(table).getByRole('button', { name: 'Delete template team' }));
    fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(table.querySelector('tr[data-template="team"]')).toBeNull());
    expect(fake.calls.find((c) => c.init?.method === 'DELETE')?.url).toBe('/api/v1/templates/team');
  });

  it('offers a user no edit or delete of a template that is not theirs', async () => {
    master([template('team'), template('mine', { owner: 'eve' })]);
    signIn({ username: 'eve', role: 'user', token: 'tok-eve' });
    render(<TemplatesPage />);
    const table = await screen.findByRole('region', { name: 'Template list' });
    expect(within(table).queryByRole('button', { name: 'Edit template team' })).toBeNull();
    expect(within(table).queryByRole('button', { name: 'Delete template team' })).toBeNull();
    expect(within(table).getByRole('button', { name: 'Edit template mine' })).toBeTruthy();
    expect(within(table).getByRole('button', { name: 'Show template team' })).toBeTruthy();
  });

  it('says so when there are none', async () => {
    master([]);
    signIn();
    render(<TemplatesPage />);
    expect(await screen.findByText('No templates yet.')).toBeTruthy();
  });
});
