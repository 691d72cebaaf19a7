// Renames, describes and labels an experiment (PATCH /experiments/{id}): a
// form opened from the experiment's header; the master checks every field
// before changing any and names the one it refuses.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { api, failureText } from '../api/client';
import { keys } from '../api/queries';
import type { Experiment } from '../api/types';
import { parseLabels } from '../lib/experiments';

export function EditExperiment({ experiment, onClose }: { experiment: Experiment; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(experiment.name);
  const [description, setDescription] = useState(experiment.description ?? '');
  const [labels, setLabels] = useState((experiment.labels ?? []).join(', '));
  const hintId = useId();
  const save = useMutation({
    mutationFn: () =>
      api.changeExperiment(experiment.id, { name: name.trim(), description, labels: parseLabels(labels) }),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.experiment(experiment.id), updated);
      void queryClient.invalidateQueries({ queryKey: keys.experiments });
      onClose();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form className="panel edit-form" aria-label={`Edit experiment ${experiment.id}`} onSubmit={submit}>
      <label className="field">
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
      </label>
      <label className="field">
        Description
        <textarea value={description} onChange={(e) => setDescription(e.target.value)} rows={3} maxLength={4096} />
      </label>
      <label className="field">
        Labels
        <input value={labels} onChange={(e) => setLabels(e.target.value)} aria-describedby={hintId} />
      </label>
      <p id={hintId} className="muted small">
        Separated by commas, for example <code>baseline, lr-sweep</code>.
      </p>
      {save.error && (
        <p className="form-error" role="alert">
          {failureText(save.error)}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
        <button type="button" className="btn" onClick={onClose} disabled={save.isPending}>
          Cancel
        </button>
      </div>
    </form>
  );
}
