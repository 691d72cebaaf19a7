// "Edit" for a workspace or a project: a dialog with its name and
// description, sending only what changed (PATCH); the master's refusal (a
// taken name, a 403) shows in the dialog, which stays open.
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { failureText } from '../api/client';
import { ConfirmDialog } from './ConfirmDialog';

export interface NamedPatch {
  name?: string;
  description?: string;
}

// What changed between `was` and the fields as typed (the name trimmed).
export function namedPatch(was: { name: string; description: string }, name: string, description: string) {
  const patch: NamedPatch = {};
  if (name.trim() !== was.name) patch.name = name.trim();
  if (description !== was.description) patch.description = description;
  return patch;
}

export function EditNamed<T>({
  what,
  named,
  small,
  blocked,
  run,
  onDone,
}: {
  what: 'workspace' | 'project';
  named: { name: string; description: string };
  small?: boolean;
  // Why it may not be used, or null.
  blocked?: string | null;
  run: (patch: NamedPatch) => Promise<T>;
  onDone?: (answer: T) => void;
}) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(named.name);
  const [description, setDescription] = useState(named.description);
  const patch = namedPatch(named, name, description);
  const save = useMutation({
    mutationFn: () => run(patch),
    onSuccess: (answer) => {
      setOpen(false);
      onDone?.(answer);
    },
  });
  return (
    <>
      <button
        type="button"
        className={`btn ${small ? 'btn-small' : ''}`}
        aria-label={`Edit ${what} ${named.name}`}
        disabled={Boolean(blocked)}
        title={blocked ?? undefined}
        onClick={() => {
          save.reset();
          setName(named.name);
          setDescription(named.description);
          setOpen(true);
        }}
      >
        Edit
      </button>
      {open && (
        <ConfirmDialog
          form
          title={`Edit ${what} ${named.name}`}
          confirmLabel="Save"
          busy={save.isPending}
          error={save.error ? failureText(save.error) : null}
          onConfirm={() => {
            if (!name.trim()) return;
            if (Object.keys(patch).length === 0) setOpen(false);
            else save.mutate();
          }}
          onCancel={() => setOpen(false)}
        >
          <label className="field">
            Name
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
          </label>
          <label className="field">
            Description
            <textarea value={description} onChange={(e) => setDescription(e.target.value)} rows={3} />
          </label>
        </ConfirmDialog>
      )}
    </>
  );
}
