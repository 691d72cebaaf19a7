// How long an experiment keeps its checkpoints and logs, and a form that
// changes it (PATCH /experiments/{id} with checkpoint_storage and
// log_retention_days): the master writes them into the stored config,
// collects checkpoints under the new counts before it answers, and its next
// retention pass follows the new days. The current values are read from the
// config; only the fields that changed are sent.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useMemo, useState, type FormEvent } from 'react';
import { api, failureText } from '../api/client';
import { isCheckpointsKey, keys } from '../api/queries';
import type { Experiment, ExperimentPatch } from '../api/types';
import { parseConfig, retentionOf, type Retention } from '../lib/config';

export function retentionText(r: Retention): string {
  const logs =
    r.logRetentionDays === null
      ? "logs as the master's default"
      : r.logRetentionDays < 0
        ? 'logs forever'
        : `logs ${r.logRetentionDays} day${r.logRetentionDays === 1 ? '' : 's'} after a trial ends`;
  return `checkpoints: best ${r.saveExperimentBest} of the experiment, best ${r.saveTrialBest} and latest ${r.saveTrialLatest} of each trial; ${logs}`;
}

export function useRetention(e: Pick<Experiment, 'config'>): Retention {
  return useMemo(() => retentionOf(parseConfig(e.config)), [e.config]);
}

type LogsChoice = 'default' | 'forever' | 'days';

// The fields of the PATCH that differ from `current`; null when none does.
export function retentionPatch(current: Retention, next: Retention): ExperimentPatch | null {
  const storage: NonNullable<ExperimentPatch['checkpoint_storage']> = {};
  if (next.saveExperimentBest !== current.saveExperimentBest) storage.save_experiment_best = next.saveExperimentBest;
  if (next.saveTrialBest !== current.saveTrialBest) storage.save_trial_best = next.saveTrialBest;
  if (next.saveTrialLatest !== current.saveTrialLatest) storage.save_trial_latest = next.saveTrialLatest;
  const patch: ExperimentPatch = {};
  if (Object.keys(storage).length > 0) patch.checkpoint_storage = storage;
  if (next.logRetentionDays !== current.logRetentionDays) patch.log_retention_days = next.logRetentionDays;
  return Object.keys(patch).length > 0 ? patch : null;
}

const COUNT = /^\d+$/;

export function EditRetention({ experiment, onClose }: { experiment: Experiment; onClose: () => void }) {
  const queryClient = useQueryClient();
  const current = useRetention(experiment);
  const [counts, setCounts] = useState({
    saveExperimentBest: String(current.saveExperimentBest),
    saveTrialBest: String(current.saveTrialBest),
    saveTrialLatest: String(current.saveTrialLatest),
  });
  const days = current.logRetentionDays;
  const [logs, setLogs] = useState<LogsChoice>(days === null ? 'default' : days < 0 ? 'forever' : 'days');
  const [logDays, setLogDays] = useState(days !== null && days >= 0 ? String(days) : '30');
  const [invalid, setInvalid] = useState<string | null>(null);
  const hintId = useId();
  const save = useMutation({
    mutationFn: (patch: ExperimentPatch) => api.changeExperiment(experiment.id, patch),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.experiment(experiment.id), updated);
      void queryClient.invalidateQueries({ queryKey: keys.experiment(experiment.id) });
      void queryClient.invalidateQueries({ predicate: (q) => isCheckpointsKey(q.queryKey) });
      onClose();
    },
  });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    const bad = (Object.entries(counts) as [keyof typeof counts, string][]).find(([, v]) => !COUNT.test(v.trim()));
    if (bad) return setInvalid('Checkpoint counts are whole numbers, 0 or more.');
    if (logs === 'days' && (!COUNT.test(logDays.trim()) || Number(logDays) > 32767))
      return setInvalid('Log retention is a whole number of days from 0 to 32767.');
    setInvalid(null);
    const next: Retention = {
      saveExperimentBest: Number(counts.saveExperimentBest),
      saveTrialBest: Number(counts.saveTrialBest),
      saveTrialLatest: Number(counts.saveTrialLatest),
      logRetentionDays: logs === 'default' ? null : logs === 'forever' ? -1 : Number(logDays),
    };
    const patch = retentionPatch(current, next);
    if (patch) save.mutate(patch);
    else onClose();
  };
  const count = (key: keyof typeof counts, label: string) => (
    <label className="field">
      {label}
      <input
        type="number"
        inputMode="numeric"
        min={0}
        step={1}
        value={counts[key]}
        onChange={(e) => setCounts((c) => ({ ...c, [key]: e.target.value }))}
      />
    </label>
  );
  const error = invalid ?? (save.error ? failureText(save.error) : null);
  return (
    <form
      className="panel edit-form"
      aria-label={`Retention of experiment ${experiment.id}`}
      aria-describedby={hintId}
      onSubmit={submit}
      noValidate
    >
      <p id={hintId} className="muted small">
        Checkpoints beyond these counts are deleted at once; a checkpoint that is a model version is always kept.
      </p>
      <div className="field-row">
        {count('saveExperimentBest', 'Best of the experiment')}
        {count('saveTrialBest', 'Best of each trial')}
        {count('saveTrialLatest', 'Latest of each trial')}
      </div>
      <div className="field-row">
        <label className="field">
          Keep logs
          <select value={logs} onChange={(e) => setLogs(e.target.value as LogsChoice)}>
            <option value="default">As the master's default</option>
            <option value="forever">Forever</option>
            <option value="days">For a number of days</option>
          </select>
        </label>
        {logs === 'days' && (
          <label className="field">
            Days after a trial ends
            <input
              type="number"
              inputMode="numeric"
              min={0}
              max={32767}
              step={1}
              value={logDays}
              onChange={(e) => setLogDays(e.target.value)}
            />
          </label>
        )}
      </div>
      {error && (
        <p className="form-error" role="alert">
          {error}
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
