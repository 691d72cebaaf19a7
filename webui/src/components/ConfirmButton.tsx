// A button whose action runs after a confirmation, the master's refusal (a
// 403 or 409 with its reason) shown in the dialog; or, when the action is
// known not to be allowed, a disabled button saying why.
import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { failureText } from '../api/client';
import { ConfirmDialog } from './ConfirmDialog';

export function ConfirmButton<T>({
  label,
  name,
  title,
  children,
  danger,
  small,
  blocked,
  run,
  onDone,
}: {
  label: string;
  // The accessible name, saying what it acts on ("Archive project nlp").
  name: string;
  title: string;
  children?: ReactNode;
  danger?: boolean;
  small?: boolean;
  // Why it may not be used, or null.
  blocked?: string | null;
  run: () => Promise<T>;
  onDone?: (answer: T) => void;
}) {
  const [asking, setAsking] = useState(false);
  const act = useMutation({
    mutationFn: run,
    onSuccess: (answer) => {
      setAsking(false);
      onDone?.(answer);
    },
  });
  const cls = `btn ${small ? 'btn-small' : ''} ${danger ? 'btn-danger-outline' : ''}`;
  return (
    <>
      <button
        type="button"
        className={cls}
        aria-label={name}
        disabled={Boolean(blocked)}
        title={blocked ?? undefined}
        onClick={() => {
          act.reset();
          setAsking(true);
        }}
      >
        {label}
      </button>
      {asking && (
        <ConfirmDialog
          title={title}
          confirmLabel={label}
          danger={danger}
          busy={act.isPending}
          error={act.error ? failureText(act.error) : null}
          onConfirm={() => act.mutate()}
          onCancel={() => setAsking(false)}
        >
          {children}
        </ConfirmDialog>
      )}
    </>
  );
}
