// Notebooks: the user's notebooks (an admin's: everyone's) with their state,
// slots, pool and why they wait; a form to start one; and per notebook, Open
// (a one-time link to its Jupyter on the task proxy's own origin, opened in a
// new tab) and Kill. The link's ticket becomes a cookie for that notebook
// only; the web UI's token never reaches the proxy's origin.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ApiError, api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Notebook } from '../api/types';
import { useSession } from '../auth/session';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { KillTaskButton } from '../components/KillTaskButton';
import { StartTaskForm } from '../components/StartTaskForm';
import { TaskTable } from '../components/TaskTable';
import { canOpen, isLive } from '../lib/tasks';

// Running, and its Jupyter has announced itself to the task proxy.
export function notebookReady(n: Notebook): boolean {
  return canOpen(n) && n.service !== null;
}

export function NotebooksPage() {
  const { session } = useSession();
  const notebooks = useQuery(queries.notebooks());
  const queryClient = useQueryClient();
  const changed = () => void queryClient.invalidateQueries({ queryKey: keys.notebooks });
  const [opening, setOpening] = useState<number | null>(null);
  const [message, setMessage] = useState<{ text: string; url?: string; error: boolean } | null>(null);
  useEffect(() => {
    document.title = 'Notebooks · Ringmaster';
  }, []);

  const openNotebook = async (id: number) => {
    setOpening(id);
    setMessage(null);
    try {
      const link = await api.proxyLink(id);
      // noopener: the notebook's page (the user's own script, on another
      // origin) gets no handle on this window.
      window.open(link.url, '_blank', 'noopener,noreferrer');
      setMessage({
        text: `Notebook ${id} opens in a new tab. If none opened, use this link within ${link.expires_in_seconds} s: `,
        url: link.url,
        error: false,
      });
    } catch (e) {
      setMessage({ text: failureText(e), error: true });
    } finally {
      setOpening(null);
    }
  };

  const list = notebooks.data?.notebooks ?? [];
  const notBuilt = notebooks.error instanceof ApiError && notebooks.error.status === 404;
  return (
    <section aria-labelledby="notebooks-title">
      <div className="page-head">
        <h1 id="notebooks-title">Notebooks</h1>
        {notebooks.data && (
          <p className="muted">
            {list.filter(isLive).length} running or waiting, {list.filter((n) => !isLive(n)).length} ended
          </p>
        )}
      </div>
      <StaleNotice error={notebooks.data ? notebooks.error : undefined} />
      {!notBuilt && (
        <section className="panel" aria-labelledby="start-notebook-title">
          <h2 id="start-notebook-title">Start a notebook</h2>
          <StartTaskForm
            noun="notebook"
            onStart={async (start) => {
              const notebook = await api.startNotebook(start);
              changed();
              return notebook.id;
            }}
          />
        </section>
      )}
      <section className="panel" aria-labelledby="notebook-list-title">
        <h2 id="notebook-list-title">{session?.role === 'admin' ? 'Every notebook' : 'Your notebooks'}</h2>
        {message && (
          <p className={message.error ? 'form-error' : 'notice'} role={message.error ? 'alert' : 'status'}>
            {message.text}
            {message.url && (
              <a href={message.url} target="_blank" rel="noopener noreferrer">
                open notebook
              </a>
            )}
          </p>
        )}
        {notebooks.isPending && <Loading what="notebooks" />}
        {!notebooks.data && notebooks.error && (
          <ErrorMessage
            what="notebooks"
            error={
              notBuilt ? new Error('this master does not run notebooks (it has no /api/v1/notebooks)') : notebooks.error
            }
            onRetry={() => void notebooks.refetch()}
          />
        )}
        {notebooks.data && list.length === 0 && (
          <Empty title="No notebooks yet.">
            Start one above, or with <code>ring notebook start</code>.
          </Empty>
        )}
        {list.length > 0 && (
          <TaskTable<Notebook>
            tasks={list}
            noun="notebook"
            showOwner={session?.role === 'admin'}
            actions={(n) =>
              isLive(n) && (
                <>
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-label={`Open notebook ${n.id}`}
                    disabled={!notebookReady(n) || opening === n.id}
                    title={notebookReady(n) ? undefined : canOpen(n) ? 'Jupyter is starting' : 'opens once it runs'}
                    onClick={() => void openNotebook(n.id)}
                  >
                    Open
                  </button>
                  <KillTaskButton noun="notebook" id={n.id} kill={(id) => api.killNotebook(id)} onDone={changed} />
                </>
              )
            }
          />
        )}
      </section>
    </section>
  );
}
