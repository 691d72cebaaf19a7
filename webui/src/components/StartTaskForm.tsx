// The form that starts a shell or a notebook: its slots (on one agent) and
// its pool (empty: the default pool). The page sends the request; errors
// are the master's (a pool that does not exist, too many slots).
import { useId, useState, type FormEvent } from 'react';
import type { TaskStart } from '../api/types';
import { failureText } from '../api/client';
import { parseTaskStart, type TaskNoun } from '../lib/tasks';

export function StartTaskForm({
  noun,
  onStart,
}: {
  noun: TaskNoun;
  // Starts it and returns its id.
  onStart: (start: TaskStart) => Promise<number>;
}) {
  const [slots, setSlots] = useState('1');
  const [pool, setPool] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const hint = useId();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseTaskStart(slots, pool);
    if ('error' in parsed) {
      setMessage({ text: parsed.error, error: true });
      return;
    }
    setBusy(true);
    setMessage(null);
    try {
      const id = await onStart(parsed.start);
      setMessage({ text: `Started ${noun} ${id}.`, error: false });
    } catch (err) {
      setMessage({ text: failureText(err), error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label={`Start a ${noun}`} noValidate>
      <label className="field">
        Slots
        <input
          name="slots"
          inputMode="numeric"
          value={slots}
          onChange={(e) => setSlots(e.target.value)}
          aria-describedby={hint}
        />
      </label>
      <label className="field">
        Pool
        <input
          name="pool"
          value={pool}
          onChange={(e) => setPool(e.target.value)}
          placeholder="default"
          spellCheck={false}
          aria-describedby={hint}
        />
      </label>
      <button type="submit" className="btn btn-primary" disabled={busy}>
        {busy ? 'Starting…' : `Start ${noun}`}
      </button>
      <p
        id={hint}
        className={message?.error ? 'form-error' : message ? 'notice' : 'muted small'}
        role={message?.error ? 'alert' : message ? 'status' : undefined}
      >
        {message?.text ?? `All its slots are on one agent; an empty pool is the default one.`}
      </p>
    </form>
  );
}
