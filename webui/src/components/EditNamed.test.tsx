import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/transport';
import { render } from '../test/render';
import { EditNamed, namedPatch } from './EditNamed';

describe('EditNamed', () => {
  it('sends only what changed', () => {
    const was = { name: 'nlp', description: 'text' };
    expect(namedPatch(was, ' nlp ', 'text')).toEqual({});
    expect(namedPatch(was, 'language ', 'text')).toEqual({ name: 'language' });
    expect(namedPatch(was, 'nlp', '')).toEqual({ description: '' });
  });

  it("keeps the dialog open with the master's refusal, then saves", async () => {
    const run = vi
      .fn()
      .mockRejectedValueOnce(new ApiError('a workspace named "cv" exists', 409, 'conflict'))
      .mockResolvedValueOnce({ id: 2 });
    const done = vi.fn();
    render(<EditNamed what="workspace" named={{ name: 'nlp', description: '' }} run={run} onDone={done} />);
    fireEvent.click(screen.getByRole('button', { name: 'Edit workspace nlp' }));
    const dialog = screen.getByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'cv' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('a workspace named "cv" exists');
    expect(run).toHaveBeenLastCalledWith({ name: 'cv' });
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'language' } });
    fireEvent.change(within(dialog).getByLabelText('Description'), { target: { value: 'words' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(done).toHaveBeenCalledWith({ id: 2 }));
    expect(run).toHaveBeenLastCalledWith({ name: 'language', description: 'words' });
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
