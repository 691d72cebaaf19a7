// Continues a trial from its latest checkpoint (POST /trials/{id}/continue):
// a dialog asks for the new total length, in the searcher's units, and where
// to train: a new single-trial experiment (then the page goes to it), or,
// for an ended experiment with a `single` searcher, in place (the experiment
// becomes active again and the page refreshes). The master's refusal (a
// length not beyond the checkpoint, no checkpoint) is shown in the dialog.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useMemo, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, failureText } from '../api/client';
import { keys } from '../api/queries';
import type { Experiment, Trial } from '../api/types';
import { useSession } from '../auth/session';
import { parseConfig, searcherLength } from '../lib/config';
import { isTerminal, mayChange } from '../lib/experiments';
import { formatCount } from '../lib/format';
import { paths } from '../paths';
import { ConfirmDialog } from './ConfirmDialog';

// Whether the trial's own experiment may train it on: an ended single-trial
// search, changed by its owner or an admin.
export function mayContinueInPlace(
  user: { username: string; role: string } | null,
  e: Pick<Experiment, 'owner' | 'state' | 'searcher'>,
): boolean {
  return mayChange(user, e) && e.searcher?.name === 'single' && isTerminal(e.state);
}

export function ContinueTrial({
  trial,
  experiment,
  small,
}: {
  trial: Pick<Trial, 'id' | 'experiment_id' | 'total_batches'>;
  experiment: Experiment;
  small?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  return (
    <>
      <button
        type="button"
        className={small ? 'btn btn-small' : 'btn'}
        aria-label={`Continue trial ${trial.id}`}
        onClick={() => setAsking(true)}
      >
        Continue
      </button>
      {asking && <ContinueDialog trial={trial} experiment={experiment} onClose={() => setAsking(false)} />}
    </>
  );
}

function ContinueDialog({
  trial,
  experiment,
  onClose,
}: {
  trial: Pick<Trial, 'id' | 'experiment_id' | 'total_batches'>;
  experiment: Experiment;
  onClose: () => void;
}) {
  const { session } = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { unit, length: asked } = useMemo(() => searcherLength(parseConfig(experiment.config)), [experiment.config]);
  const inPlaceAllowed = mayContinueInPlace(session, experiment);
  const [length, setLength] = useState('');
  const [inPlace, setInPlace] = useState(false);
  const [invalid, setInvalid] = useState<string | null>(null);
  const hintId = useId();
  const run = useMutation({
    mutationFn: (n: number) => api.continueTrial(trial.id, n, inPlace),
    onSuccess: (answer) => {
      void queryClient.invalidateQueries({ queryKey: keys.trial(trial.id) });
      void queryClient.invalidateQueries({ queryKey: keys.experiment(trial.experiment_id) });
      void queryClient.invalidateQueries({ queryKey: keys.experimentLists });
      onClose();
      if (!inPlace) navigate(paths.experiment(answer.id));
    },
  });
  const confirm = () => {
    const n = Number(length);
    if (!/^\d+$/.test(length.trim()) || n <= 0) {
      setInvalid('Give the new total length as a whole number above 0.');
      return;
    }
    setInvalid(null);
    run.mutate(n);
  };
  const unitText = unit ?? 'searcher units';
  return (
    <ConfirmDialog
      title={`Continue trial ${trial.id}`}
      confirmLabel="Continue"
      form
      busy={run.isPending}
      error={invalid ?? (run.error ? failureText(run.error) : null)}
      onConfirm={confirm}
      onCancel={onClose}
    >
      <p>It trains on from its latest checkpoint with the same hyperparameters and seed.</p>
      <label className="field">
        New total length ({unitText})
        <input
          type="number"
          inputMode="numeric"
          min={1}
          step={1}
          value={length}
          aria-describedby={hintId}
          aria-invalid={invalid ? true : undefined}
          onChange={(e) => setLength(e.target.value)}
        />
      </label>
      <p id={hintId} className="muted small">
        The total, not more on top: it trained {formatCount(trial.total_batches)} batches so far
        {asked !== null ? `; its searcher asked for ${formatCount(asked)} ${unitText}` : ''}.
      </p>
      {inPlaceAllowed ? (
        <fieldset className="choice">
          <legend>Where</legend>
          <label>
            <input type="radio" name="continue-where" checked={!inPlace} onChange={() => setInPlace(false)} /> As a new
            experiment
          </label>
          <label>
            <input type="radio" name="continue-where" checked={inPlace} onChange={() => setInPlace(true)} /> In place:
            experiment {trial.experiment_id} becomes active again
          </label>
        </fieldset>
      ) : (
        <p>A new experiment trains it; experiment {trial.experiment_id} stays as it is.</p>
      )}
    </ConfirmDialog>
  );
}
