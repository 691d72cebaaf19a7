// Registers a checkpoint as the next version of a model (POST
// /models/{name}/versions): a dialog picks one of the models the user may
// add to (their own; an admin's: any not archived) or names a new one, which
// is created first (POST /models); a version name and notes are optional.
// Once registered, the page goes to the model.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Checkpoint } from '../api/types';
import { useSession } from '../auth/session';
import { mayChange } from '../lib/experiments';
import { formatCount } from '../lib/format';
import { paths } from '../paths';
import { ConfirmDialog } from './ConfirmDialog';

const NEW_MODEL = '';

export function RegisterVersion({ checkpoint }: { checkpoint: Pick<Checkpoint, 'uuid' | 'batches' | 'trial_id'> }) {
  const [asking, setAsking] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        aria-label={`Register checkpoint ${checkpoint.uuid} as a model version`}
        onClick={() => setAsking(true)}
      >
        Register
      </button>
      {asking && <RegisterDialog checkpoint={checkpoint} onClose={() => setAsking(false)} />}
    </>
  );
}

function RegisterDialog({
  checkpoint,
  onClose,
}: {
  checkpoint: Pick<Checkpoint, 'uuid' | 'batches' | 'trial_id'>;
  onClose: () => void;
}) {
  const { session } = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const models = useQuery(queries.modelList({ archived: 'false', limit: 1000 }, 0));
  const choices = (models.data?.models ?? []).filter((m) => mayChange(session, m));
  const [model, setModel] = useState(NEW_MODEL);
  const [newName, setNewName] = useState('');
  const [versionName, setVersionName] = useState('');
  const [notes, setNotes] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const register = useMutation({
    mutationFn: async (target: { name: string; create: boolean }) => {
      if (target.create) await api.createModel({ name: target.name });
      return api.registerVersion(target.name, {
        checkpoint_uuid: checkpoint.uuid,
        ...(versionName.trim() ? { name: versionName.trim() } : {}),
        ...(notes ? { notes } : {}),
      });
    },
    onSuccess: (version) => {
      void queryClient.invalidateQueries({ queryKey: keys.models });
      onClose();
      navigate(paths.model(version.model));
    },
    // A model created before the version was refused is listed from now on.
    onError: () => void queryClient.invalidateQueries({ queryKey: keys.models }),
  });
  const confirm = () => {
    const create = model === NEW_MODEL;
    const name = create ? newName.trim() : model;
    if (!name) return setInvalid("Name the new model, or pick one you've made.");
    setInvalid(null);
    register.mutate({ name, create: create && !choices.some((m) => m.name === name) });
  };
  return (
    <ConfirmDialog
      title={`Register checkpoint ${checkpoint.uuid.slice(0, 8)} as a model version`}
      confirmLabel="Register"
      form
      busy={register.isPending}
      error={invalid ?? (register.error ? failureText(register.error) : null)}
      onConfirm={confirm}
      onCancel={onClose}
    >
      <p>
        The checkpoint of trial {checkpoint.trial_id} at {formatCount(checkpoint.batches)} batches becomes the model's
        next version; it is kept whatever its experiment's retention says.
      </p>
      <label className="field">
        Model
        <select value={model} onChange={(e) => setModel(e.target.value)}>
          <option value={NEW_MODEL}>A new model…</option>
          {choices.map((m) => (
            <option key={m.name} value={m.name}>
              {m.name} ({m.num_versions} version{m.num_versions === 1 ? '' : 's'})
            </option>
          ))}
        </select>
      </label>
      {model === NEW_MODEL && (
        <label className="field">
          New model's name
          <input
            value={newName}
            maxLength={128}
            onChange={(e) => setNewName(e.target.value)}
            aria-invalid={invalid ? true : undefined}
          />
        </label>
      )}
      <label className="field">
        Version name (optional)
        <input value={versionName} maxLength={128} onChange={(e) => setVersionName(e.target.value)} />
      </label>
      <label className="field">
        Notes (optional)
        <textarea value={notes} rows={3} onChange={(e) => setNotes(e.target.value)} />
      </label>
    </ConfirmDialog>
  );
}
