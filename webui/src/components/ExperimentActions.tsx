// Pause / activate / kill / archive buttons for one experiment, each behind a
// confirmation; the experiment's cached views are refreshed, and `onDone`
// receives the experiment as the master answered.
// Only its owner and admins get the buttons; the page of someone else's
// experiment says why there are none (the list just leaves them out).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, failureText } from '../api/client';
import { keys } from '../api/queries';
import type { Experiment, ExperimentAction } from '../api/types';
import { useSession } from '../auth/session';
import { ACTIONS, availableActions, mayChange } from '../lib/experiments';
import { ConfirmDialog } from './ConfirmDialog';

export function ExperimentActions({
  experiment,
  onDone,
  compact,
}: {
  experiment: Pick<Experiment, 'id' | 'name' | 'state' | 'archived' | 'owner'>;
  onDone?: (updated: Experiment, action: ExperimentAction) => void;
  compact?: boolean;
}) {
  const [pending, setPending] = useState<ExperimentAction | null>(null);
  const { session } = useSession();
  const queryClient = useQueryClient();
  const act = useMutation({
    mutationFn: (action: ExperimentAction) => api.experimentAction(experiment.id, action),
    onSuccess: (updated, action) => {
      setPending(null);
      void queryClient.invalidateQueries({ queryKey: keys.experiments });
      onDone?.(updated, action);
    },
  });
  const actions = availableActions(experiment);
  if (actions.length === 0) return null;
  if (!mayChange(session, experiment))
    return compact ? null : (
      <p className="muted small not-yours">
        This is {experiment.owner}&rsquo;s experiment: only they or an admin can{' '}
        {actions.map((a) => ACTIONS[a].label.toLowerCase()).join(' or ')} it.
      </p>
    );

  return (
    <div className="actions">
      {actions.map((a) => (
        <button
          key={a}
          type="button"
          className={`btn ${compact ? 'btn-small' : ''} ${ACTIONS[a].danger ? 'btn-danger-outline' : ''}`}
          onClick={() => {
            act.reset();
            setPending(a);
          }}
          aria-label={`${ACTIONS[a].label} experiment ${experiment.id}`}
        >
          {ACTIONS[a].label}
        </button>
      ))}
      {pending && (
        <ConfirmDialog
          title={ACTIONS[pending].title(experiment)}
          confirmLabel={ACTIONS[pending].label}
          danger={ACTIONS[pending].danger}
          busy={act.isPending}
          error={act.error ? failureText(act.error) : null}
          onConfirm={() => act.mutate(pending)}
          onCancel={() => setPending(null)}
        >
          <p>{ACTIONS[pending].explain}</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
