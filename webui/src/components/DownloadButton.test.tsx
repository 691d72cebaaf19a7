import { fireEvent, screen, waitFor } from '@testing-library/react';
import { render } from '../test/render';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { fakeFetch, json, signIn } from '../test/fixtures';
import { DownloadButton } from './DownloadButton';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('DownloadButton', () => {
  it('fetches the file with the session token and saves it under its name', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/7/model_definition': () =>
        new Response(new Uint8Array([0x1f, 0x8b, 1, 2]), { headers: { 'Content-Type': 'application/gzip' } }),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn({ token: 'tok' });
    const created: Blob[] = [];
    // Only the blob URL functions are replaced (requests still parse URLs).
    const saved = { create: URL.createObjectURL, revoke: URL.revokeObjectURL };
    URL.createObjectURL = (b: Blob) => {
      created.push(b);
      return 'blob:model';
    };
    URL.revokeObjectURL = () => {};
    onTestFinished(() => {
      URL.createObjectURL = saved.create;
      URL.revokeObjectURL = saved.revoke;
    });
    const clicked: { href: string; download: string }[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push({ href: this.getAttribute('href') ?? '', download: this.download });
    });
    render(
      <DownloadButton
        path="/api/v1/experiments/7/model_definition"
        filename="experiment_7_model_def.tar.gz"
        label="Download model"
        ariaLabel="Download the model definition of experiment 7"
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Download the model definition of experiment 7' }));
    await waitFor(() => expect(clicked).toHaveLength(1));
    expect(clicked[0]).toEqual({ href: 'blob:model', download: 'experiment_7_model_def.tar.gz' });
    expect(created[0].size).toBe(4);
    const headers = fake.calls[0].init?.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer tok');
  });

  it('says why the master refused', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/7/model_definition': () =>
        json(
          {
            error: {
              code: 'permission_denied',
              message: 'experiment 7 belongs to ada; only its owner or an admin may download its model definition',
            },
          },
          403,
        ),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    render(
      <DownloadButton
        path="/api/v1/experiments/7/model_definition"
        filename="m.tar.gz"
        label="Download model"
        ariaLabel="Download the model definition of experiment 7"
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Download the model definition of experiment 7' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/^Not allowed: experiment 7 belongs to ada/);
  });
});
