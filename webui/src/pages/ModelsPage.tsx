// The model registry: every model (name, description, labels, versions,
// owner), filtered by a part of the name and by a label (both in the URL),
// and a form to create one, which is then the signed-in user's.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Model } from '../api/types';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { parseLabels } from '../lib/experiments';
import { formatDateTime } from '../lib/format';
import { paths } from '../paths';

const LIMIT = 200;

// The filters of the URL's query (?name=&label=), and back.
export function parseModelQuery(search: string): { name: string; label: string } {
  const p = new URLSearchParams(search);
  return { name: p.get('name') ?? '', label: p.get('label') ?? '' };
}

export function modelQueryToSearch(q: { name: string; label: string }): string {
  const p = new URLSearchParams();
  if (q.name) p.set('name', q.name);
  if (q.label) p.set('label', q.label);
  const s = p.toString();
  return s ? `?${s}` : '';
}

export function ModelsPage() {
  const { search } = useLocation();
  const navigate = useNavigate();
  const q = parseModelQuery(search);
  const [nameInput, setNameInput] = useState(q.name);
  const [labelInput, setLabelInput] = useState(q.label);
  const list = useQuery(queries.modelList({ name: q.name, label: q.label, limit: LIMIT }));

  useEffect(() => {
    document.title = 'Models · Ringmaster';
  }, []);
  // A new URL (back, a link) shows its filters; typing in a filter updates
  // the view (and the URL) after a short pause.
  useEffect(() => setNameInput(q.name), [q.name]);
  useEffect(() => setLabelInput(q.label), [q.label]);
  useEffect(() => {
    if (nameInput === q.name && labelInput === q.label) return;
    const t = setTimeout(
      () => navigate(paths.models(modelQueryToSearch({ name: nameInput, label: labelInput })), { replace: true }),
      300,
    );
    return () => clearTimeout(t);
  }, [nameInput, labelInput, q.name, q.label, navigate]);

  const data = list.data;
  const filtered = q.name !== '' || q.label !== '';
  return (
    <section aria-labelledby="models-title">
      <div className="page-head">
        <h1 id="models-title">Models</h1>
        {data && (
          <p className="muted">
            {data.total} {data.total === 1 ? 'model' : 'models'}
          </p>
        )}
      </div>
      <form className="toolbar" role="search" aria-label="Filter models" onSubmit={(e) => e.preventDefault()}>
        <label className="inline-field grow">
          Name
          <input
            type="search"
            value={nameInput}
            placeholder="Filter by name"
            onChange={(e) => setNameInput(e.target.value)}
          />
        </label>
        <label className="inline-field">
          Label
          <input type="search" value={labelInput} onChange={(e) => setLabelInput(e.target.value)} />
        </label>
        {filtered && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => {
              setNameInput('');
              setLabelInput('');
              navigate(paths.models(), { replace: true });
            }}
          >
            Clear filters
          </button>
        )}
      </form>
      <StaleNotice error={data ? list.error : undefined} />
      <section className="panel" aria-labelledby="model-list-title">
        <h2 id="model-list-title">Registered models</h2>
        {list.isPending && <Loading what="models" />}
        {!data && list.error && <ErrorMessage what="models" error={list.error} onRetry={() => void list.refetch()} />}
        {data &&
          (data.models.length === 0 ? (
            <Empty title={filtered ? 'No model matches these filters.' : 'No models yet.'}>
              {filtered ? null : 'Create one below, or register a checkpoint from an experiment or trial page.'}
            </Empty>
          ) : (
            <ModelTable models={data.models} />
          ))}
        {data && data.total > data.models.length && (
          <p className="muted small">
            The first {data.models.length} of {data.total}; narrow the filters to see the others.
          </p>
        )}
      </section>
      <section className="panel" aria-labelledby="new-model-title">
        <h2 id="new-model-title">New model</h2>
        <CreateModelForm />
      </section>
    </section>
  );
}

function ModelTable({ models }: { models: Model[] }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Models table">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Labels</th>
            <th scope="col" className="col-num">
              Versions
            </th>
            <th scope="col">Owner</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.name} data-model={m.name}>
              <td>
                <Link to={paths.model(m.name)} className="strong">
                  {m.name}
                </Link>
                {m.archived && <span className="chip chip-muted">archived</span>}
              </td>
              <td>{m.description}</td>
              <td>
                {m.labels.map((l) => (
                  <span key={l} className="chip">
                    {l}
                  </span>
                ))}
              </td>
              <td className="col-num">{m.num_versions}</td>
              <td>{m.owner}</td>
              <td>{formatDateTime(m.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CreateModelForm() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [labels, setLabels] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => api.createModel({ name: name.trim(), description, labels: parseLabels(labels) }),
    onSuccess: (model) => {
      void queryClient.invalidateQueries({ queryKey: keys.models });
      setCreated(model.name);
      setName('');
      setDescription('');
      setLabels('');
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCreated(null);
    create.mutate();
  };
  return (
    <form className="inline-form" aria-label="Create a model" onSubmit={submit}>
      <label className="field">
        Name
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
      </label>
      <label className="field grow">
        Description
        <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={4096} />
      </label>
      <label className="field">
        Labels
        <input value={labels} onChange={(e) => setLabels(e.target.value)} placeholder="a, b" />
      </label>
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={create.isPending || !name.trim()}>
          {create.isPending ? 'Creating…' : 'Create model'}
        </button>
      </div>
      {create.error && (
        <p className="form-error" role="alert">
          {failureText(create.error)}
        </p>
      )}
      {created && (
        <p className="notice" role="status">
          Created <Link to={paths.model(created)}>{created}</Link>.
        </p>
      )}
    </form>
  );
}
