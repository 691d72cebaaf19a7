// Webhooks: the URLs the master posts to when an experiment reaches a state
// or a trial's log line matches a pattern (docs/rest.md, "Webhooks"). A
// user sees the cluster-wide webhooks and those of their workspaces, each
// with its latest deliveries; admins create cluster-wide ones, a
// workspace's ADMINs webhooks of that workspace (watching only its
// experiments); the signing secret is shown once, right after; the same
// people send a webhook a test event and delete it. The master's reason shows when it refuses (e.g. a URL off
// master.yaml's webhooks.allowed_urls).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import {
  RUN_STATES,
  type CreatedWebhook,
  type Workspace,
  type RunState,
  type Webhook,
  type WebhookDelivery,
  type WebhookTrigger,
} from '../api/types';
import { useSession } from '../auth/session';
import { roleIn } from '../lib/workspaces';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { formatDateTime, stateLabel } from '../lib/format';
import { paths } from '../paths';

const DELIVERY_LIMIT = 10;

// The states a trigger may name: the ones an experiment ends in first.
const ENDED: RunState[] = ['COMPLETED', 'ERROR', 'CANCELED'];
export const TRIGGER_STATES: RunState[] = [...ENDED, ...RUN_STATES.filter((s) => !ENDED.includes(s))];

// The triggers of the form: one per chosen state, one per non-empty line of
// patterns.
export function buildTriggers(states: readonly string[], patterns: string): WebhookTrigger[] {
  return [
    ...states.map((state): WebhookTrigger => ({ trigger_type: 'EXPERIMENT_STATE_CHANGE', condition: { state } })),
    ...patterns
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .map((regex): WebhookTrigger => ({ trigger_type: 'TASK_LOG', condition: { regex } })),
  ];
}

export function describeTrigger(t: WebhookTrigger): string {
  if (t.trigger_type === 'EXPERIMENT_STATE_CHANGE') return `experiment ${stateLabel(t.condition.state ?? '?')}`;
  return `log matches /${t.condition.regex ?? ''}/`;
}

// What became of a delivery, in words: "HTTP 200", or the failure.
export function deliveryOutcome(d: Pick<WebhookDelivery, 'state' | 'last_status' | 'last_error'>): string {
  const status = d.last_status !== null ? `HTTP ${d.last_status}` : '';
  const parts = [status, d.last_error].filter((p) => p !== '');
  return parts.length ? parts.join(': ') : d.state === 'PENDING' ? 'not sent yet' : '';
}

// The workspaces whose webhooks `user` manages: all for admins, else those
// they are an ADMIN of; archived ones take no new webhook.
export function managedWorkspaces(
  workspaces: Workspace[],
  user: { username: string; role: string } | null | undefined,
): Workspace[] {
  if (!user) return [];
  return workspaces.filter((w) => user.role === 'admin' || roleIn(w, user.username) === 'ADMIN');
}

export function WebhooksPage() {
  const { session } = useSession();
  const admin = session?.role === 'admin';
  const list = useQuery(queries.webhooks());
  const workspaces = useQuery(queries.workspaceList({}, 0));
  const managed = managedWorkspaces(workspaces.data?.workspaces ?? [], session);
  const mayManage = (w: Webhook) => admin || (w.workspace_id !== null && managed.some((m) => m.id === w.workspace_id));
  const creatable = managed.filter((w) => !w.archived);
  useEffect(() => {
    document.title = 'Webhooks · Ringmaster';
  }, []);
  const data = list.data;
  return (
    <section aria-labelledby="webhooks-title">
      <div className="page-head">
        <h1 id="webhooks-title">Webhooks</h1>
        {data && (
          <p className="muted">
            {data.total} {data.total === 1 ? 'webhook' : 'webhooks'}
          </p>
        )}
      </div>
      <p className="muted small">
        The master posts to each URL when an experiment reaches one of its states or a trial prints a line matching one
        of its patterns. Admins create cluster-wide webhooks; a workspace’s admins create webhooks that watch only its
        experiments.
      </p>
      <StaleNotice error={data ? list.error : undefined} />
      {list.isPending && <Loading what="webhooks" />}
      {!data && list.error && <ErrorMessage what="webhooks" error={list.error} onRetry={() => void list.refetch()} />}
      {data &&
        (data.webhooks.length === 0 ? (
          <section className="panel" aria-label="Webhooks">
            <Empty title="No webhooks yet.">{admin || creatable.length > 0 ? 'Create one below.' : null}</Empty>
          </section>
        ) : (
          data.webhooks.map((w) => <WebhookPanel key={w.id} webhook={w} manage={mayManage(w)} />)
        ))}
      {(admin || creatable.length > 0) && (
        <section className="panel" aria-labelledby="new-webhook-title">
          <h2 id="new-webhook-title">New webhook</h2>
          <CreateWebhookForm clusterWide={admin} workspaces={creatable} />
        </section>
      )}
    </section>
  );
}

function WebhookPanel({ webhook: w, manage }: { webhook: Webhook; manage: boolean }) {
  const titleId = useId();
  return (
    <section className="panel" aria-labelledby={titleId} data-webhook={w.id}>
      <div className="page-head">
        <h2 id={titleId}>{w.name}</h2>
        {manage && (
          <div className="actions">
            <TestWebhook webhook={w} />
            <DeleteWebhook webhook={w} />
          </div>
        )}
      </div>
      <dl className="facts">
        <div>
          <dt>URL</dt>
          <dd>
            <code>{w.url}</code>
          </dd>
        </div>
        <div>
          <dt>Type</dt>
          <dd>{w.type}</dd>
        </div>
        <div>
          <dt>Watches</dt>
          <dd>
            {w.workspace_id === null ? (
              'every experiment (cluster-wide)'
            ) : (
              <>
                experiments of workspace{' '}
                <Link to={paths.workspace(w.workspace_id)}>{w.workspace ?? `#${w.workspace_id}`}</Link>
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>Triggers</dt>
          <dd>
            {w.triggers.map((t, i) => (
              <span key={i} className="chip">
                {describeTrigger(t)}
              </span>
            ))}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            {formatDateTime(w.created_at)} by {w.created_by}
          </dd>
        </div>
      </dl>
      <Deliveries webhook={w} />
    </section>
  );
}

function Deliveries({ webhook: w }: { webhook: Webhook }) {
  const deliveries = useQuery(queries.webhookDeliveries(w.id, DELIVERY_LIMIT));
  const data = deliveries.data;
  return (
    <>
      <h3>Recent deliveries</h3>
      {deliveries.isPending && <Loading what="deliveries" />}
      {!data && deliveries.error && (
        <ErrorMessage what="deliveries" error={deliveries.error} onRetry={() => void deliveries.refetch()} />
      )}
      {data &&
        (data.deliveries.length === 0 ? (
          <p className="muted small">Nothing sent yet.</p>
        ) : (
          <div className="table-wrap" tabIndex={0} role="region" aria-label={`Deliveries of ${w.name}`}>
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">State</th>
                  <th scope="col" className="col-num">
                    Attempts
                  </th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Created</th>
                  <th scope="col">Delivered</th>
                </tr>
              </thead>
              <tbody>
                {data.deliveries.map((d) => (
                  <tr key={d.id} data-delivery={d.id}>
                    <td>{d.event_type}</td>
                    <td>{d.state}</td>
                    <td className="col-num">{d.attempts}</td>
                    <td>{deliveryOutcome(d)}</td>
                    <td>{formatDateTime(d.created_at)}</td>
                    <td>{d.delivered_at ? formatDateTime(d.delivered_at) : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {data && data.total > data.deliveries.length && (
        <p className="muted small">
          The newest {data.deliveries.length} of {data.total}.
        </p>
      )}
    </>
  );
}

// Sends a TEST event now (one attempt) and says what became of it.
function TestWebhook({ webhook: w }: { webhook: Webhook }) {
  const queryClient = useQueryClient();
  const test = useMutation({
    mutationFn: () => api.testWebhook(w.id),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: keys.webhookDeliveries(w.id) }),
  });
  const d = test.data;
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        aria-label={`Send a test event to ${w.name}`}
        disabled={test.isPending}
        onClick={() => test.mutate()}
      >
        {test.isPending ? 'Sending…' : 'Send test'}
      </button>
      {test.error && (
        <p className="form-error" role="alert">
          {failureText(test.error)}
        </p>
      )}
      {d && (
        <p
          className={d.state === 'DELIVERED' ? 'notice' : 'form-error'}
          role={d.state === 'DELIVERED' ? 'status' : 'alert'}
        >
          Test {d.state === 'DELIVERED' ? 'delivered' : d.state === 'FAILED' ? 'failed' : 'pending'}
          {deliveryOutcome(d) ? ` (${deliveryOutcome(d)})` : ''}.
        </p>
      )}
    </>
  );
}

function DeleteWebhook({ webhook: w }: { webhook: Webhook }) {
  const [asking, setAsking] = useState(false);
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api.deleteWebhook(w.id),
    onSuccess: () => {
      setAsking(false);
      void queryClient.invalidateQueries({ queryKey: keys.webhookList });
      setTimeout(() => queryClient.removeQueries({ queryKey: keys.webhookDeliveries(w.id) }), 0);
    },
  });
  return (
    <>
      <button
        type="button"
        className="btn btn-small btn-danger-outline"
        aria-label={`Delete webhook ${w.name}`}
        onClick={() => {
          remove.reset();
          setAsking(true);
        }}
      >
        Delete
      </button>
      {asking && (
        <ConfirmDialog
          title={`Delete webhook ${w.name}?`}
          confirmLabel="Delete"
          danger
          busy={remove.isPending}
          error={remove.error ? failureText(remove.error) : null}
          onConfirm={() => remove.mutate()}
          onCancel={() => setAsking(false)}
        >
          <p>
            The master stops posting to <code>{w.url}</code>, and its deliveries are deleted with it. This cannot be
            undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

// `clusterWide`: the caller may create cluster-wide webhooks (admins);
// `workspaces`: those whose webhooks they may create.
function CreateWebhookForm({ clusterWide, workspaces }: { clusterWide: boolean; workspaces: Workspace[] }) {
  const queryClient = useQueryClient();
  // '' is cluster-wide; otherwise a workspace's id.
  const [scope, setScope] = useState(clusterWide ? '' : String(workspaces[0]?.id ?? ''));
  const patternsHint = useId();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [type, setType] = useState<Webhook['type']>('DEFAULT');
  const [states, setStates] = useState<RunState[]>([]);
  const [patterns, setPatterns] = useState('');
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const triggers = buildTriggers(states, patterns);
  const create = useMutation({
    mutationFn: () =>
      api.createWebhook({
        name: name.trim(),
        url: url.trim(),
        type,
        triggers,
        ...(scope === '' ? {} : { workspace_id: Number(scope) }),
      }),
    onSuccess: (webhook) => {
      void queryClient.invalidateQueries({ queryKey: keys.webhookList });
      setCreated(webhook);
      setName('');
      setUrl('');
      setType('DEFAULT');
      setStates([]);
      setPatterns('');
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCreated(null);
    create.mutate();
  };
  const toggle = (s: RunState, on: boolean) =>
    setStates((prev) => (on ? TRIGGER_STATES.filter((x) => x === s || prev.includes(x)) : prev.filter((x) => x !== s)));
  return (
    <form className="inline-form" aria-label="Create a webhook" onSubmit={submit}>
      <label className="field">
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={64} />
      </label>
      <label className="field grow">
        URL
        <input
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          required
          placeholder="https://hooks.example.com/ring"
        />
      </label>
      <label className="field">
        Watches
        <select value={scope} onChange={(e) => setScope(e.target.value)}>
          {clusterWide && <option value="">every experiment (cluster-wide)</option>}
          {workspaces.map((w) => (
            <option key={w.id} value={String(w.id)}>
              workspace {w.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        Type
        <select value={type} onChange={(e) => setType(e.target.value as Webhook['type'])}>
          <option value="DEFAULT">DEFAULT</option>
          <option value="SLACK">SLACK</option>
        </select>
      </label>
      <fieldset className="choice">
        <legend>Experiment reaches</legend>
        {TRIGGER_STATES.map((s) => (
          <label key={s} className="checkbox">
            <input type="checkbox" checked={states.includes(s)} onChange={(e) => toggle(s, e.target.checked)} />{' '}
            {stateLabel(s)}
          </label>
        ))}
      </fieldset>
      <label className="field grow">
        Log patterns
        <textarea
          value={patterns}
          onChange={(e) => setPatterns(e.target.value)}
          rows={3}
          aria-describedby={patternsHint}
          placeholder="disk (full|quota)"
        />
      </label>
      <p id={patternsHint} className="muted small">
        One RE2 pattern a line; a trial's output line matching one sends an event.
      </p>
      <div className="actions">
        <button
          type="submit"
          className="btn btn-primary"
          disabled={create.isPending || !name.trim() || !url.trim() || triggers.length === 0}
        >
          {create.isPending ? 'Creating…' : 'Create webhook'}
        </button>
      </div>
      {create.error && (
        <p className="form-error" role="alert">
          {failureText(create.error)}
        </p>
      )}
      {created && (
        <div className="notice" role="status">
          <p>
            Created {created.name}. Its signing secret (the key of X-Ring-Signature) is shown only now; it will not be
            shown again:
          </p>
          <p>
            <code>{created.secret}</code>
          </p>
        </div>
      )}
    </form>
  );
}
