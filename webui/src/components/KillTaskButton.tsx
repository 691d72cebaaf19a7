// Ends a shell, a notebook or a trial after asking: its processes are
// stopped and its slots freed; it is not restarted.
import { useState } from 'react';
import { failureText } from '../api/client';
import type { TaskNoun } from '../lib/tasks';
import { ConfirmDialog } from './ConfirmDialog';

export function KillTaskButton({
  noun,
  id,
  explain = 'Its processes are stopped and its slots freed. It is not restarted.',
  kill,
  onDone,
}: {
  noun: TaskNoun | 'trial';
  id: number;
  explain?: string;
  kill: (id: number) => Promise<unknown>;
  onDone: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await kill(id);
      setAsking(false);
      onDone();
    } catch (e) {
      setError(failureText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className="btn btn-small btn-danger-outline"
        aria-label={`Kill ${noun} ${id}`}
        onClick={() => setAsking(true)}
      >
        Kill
      </button>
      {asking && (
        <ConfirmDialog
          title={`Kill ${noun} ${id}?`}
          confirmLabel={`Kill ${noun}`}
          danger
          busy={busy}
          error={error}
          onConfirm={() => void run()}
          onCancel={() => setAsking(false)}
        >
          <p>{explain}</p>
        </ConfirmDialog>
      )}
    </>
  );
}
