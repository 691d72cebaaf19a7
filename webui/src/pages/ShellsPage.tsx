// Shells: the user's shells (an admin's: everyone's) with their state, slots,
// pool and why they wait; a form to start one; and per shell, Open (its
// terminal in the page, through a fresh one-time ticket each time, since a
// browser cannot put its token on a WebSocket) and Kill. Closing the terminal
// leaves the shell running; opening it again shows its last screen first.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState } from 'react';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Shell } from '../api/types';
import { useSession } from '../auth/session';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { KillTaskButton } from '../components/KillTaskButton';
import { StartTaskForm } from '../components/StartTaskForm';
import { TaskTable } from '../components/TaskTable';
import { canOpen, isLive } from '../lib/tasks';

// xterm.js is loaded with the first terminal opened (a chunk of its own).
const TerminalView = lazy(() => import('../components/TerminalView').then((m) => ({ default: m.TerminalView })));

export function ShellsPage() {
  const { session } = useSession();
  const shells = useQuery(queries.shells());
  const queryClient = useQueryClient();
  const changed = () => void queryClient.invalidateQueries({ queryKey: keys.shells });
  const [open, setOpen] = useState<{ id: number; ticket: string } | null>(null);
  const [opening, setOpening] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    document.title = 'Shells · Ringmaster';
  }, []);

  const openTerminal = async (id: number) => {
    setOpening(id);
    setError(null);
    try {
      const { ticket } = await api.terminalTicket(id);
      setOpen({ id, ticket });
    } catch (e) {
      setError(failureText(e));
    } finally {
      setOpening(null);
    }
  };

  const list = shells.data?.shells ?? [];
  const live = list.filter(isLive).length;
  return (
    <section aria-labelledby="shells-title">
      <div className="page-head">
        <h1 id="shells-title">Shells</h1>
        {shells.data && (
          <p className="muted">
            {live} running or waiting, {list.length - live} ended
          </p>
        )}
      </div>
      <StaleNotice error={shells.data ? shells.error : undefined} />
      <section className="panel" aria-labelledby="start-shell-title">
        <h2 id="start-shell-title">Start a shell</h2>
        <StartTaskForm
          noun="shell"
          onStart={async (start) => {
            const shell = await api.startShell(start);
            changed();
            return shell.id;
          }}
        />
      </section>
      {open && (
        <section className="panel" aria-labelledby="terminal-title">
          <div className="card-head">
            <h2 id="terminal-title">Terminal of shell {open.id}</h2>
            <button type="button" className="btn btn-small" onClick={() => setOpen(null)}>
              Close terminal
            </button>
          </div>
          <p className="muted small">Closing it leaves the shell running; Kill ends it.</p>
          <Suspense fallback={<Loading what="the terminal" />}>
            <TerminalView key={open.ticket} path={api.terminalPath(open.id)} ticket={open.ticket} />
          </Suspense>
        </section>
      )}
      <section className="panel" aria-labelledby="shell-list-title">
        <h2 id="shell-list-title">{session?.role === 'admin' ? 'Every shell' : 'Your shells'}</h2>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        {shells.isPending && <Loading what="shells" />}
        {!shells.data && shells.error && (
          <ErrorMessage what="shells" error={shells.error} onRetry={() => void shells.refetch()} />
        )}
        {shells.data && list.length === 0 && (
          <Empty title="No shells yet.">
            Start one above, or with <code>ring shell start</code>.
          </Empty>
        )}
        {list.length > 0 && (
          <TaskTable<Shell>
            tasks={list}
            noun="shell"
            showOwner={session?.role === 'admin'}
            actions={(s) =>
              isLive(s) && (
                <>
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-label={`Open shell ${s.id}`}
                    disabled={!canOpen(s) || opening === s.id}
                    title={canOpen(s) ? undefined : 'opens once it runs'}
                    onClick={() => void openTerminal(s.id)}
                  >
                    Open
                  </button>
                  <KillTaskButton
                    noun="shell"
                    id={s.id}
                    kill={(id) => api.killShell(id)}
                    onDone={() => {
                      if (open?.id === s.id) setOpen(null);
                      changed();
                    }}
                  />
                </>
              )
            }
          />
        )}
      </section>
    </section>
  );
}
