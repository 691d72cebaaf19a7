// Kills one trial after asking (POST /trials/{id}/kill): its processes stop
// and it ends CANCELED, not restarted; its searcher hears it was canceled and
// the experiment goes on. The trial's and its experiment's views refresh.
import { useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys } from '../api/queries';
import { KillTaskButton } from './KillTaskButton';

export function KillTrialButton({ trialId, experimentId }: { trialId: number; experimentId: number }) {
  const queryClient = useQueryClient();
  return (
    <KillTaskButton
      noun="trial"
      id={trialId}
      explain="Its processes stop and it ends CANCELED; the searcher hears it was canceled and the experiment goes on with its other trials."
      kill={(id) => api.killTrial(id)}
      onDone={() => {
        void queryClient.invalidateQueries({ queryKey: keys.trial(trialId) });
        void queryClient.invalidateQueries({ queryKey: keys.experiment(experimentId) });
      }}
    />
  );
}
