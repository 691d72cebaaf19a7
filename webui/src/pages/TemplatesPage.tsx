// Templates: named partial experiment configs stored in the master that an
// experiment's config is laid over (docs/rest.md, "Templates"; `ring
// template set|list|describe|delete`). Every signed-in user lists and reads
// them and saves new ones, which are theirs; a template's owner or an admin
// replaces and deletes it (the master refuses others, saying whose it is).
// The config is written in the fork page's YAML editor (CodeMirror), and a
// config the master refuses shows its reason. Loaded only when opened.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Template } from '../api/types';
import { useSession } from '../auth/session';
import { ConfirmButton } from '../components/ConfirmButton';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { YamlEditor } from '../components/YamlEditor';
import { formatDateTime } from '../lib/format';

// The names the master takes: 1-64 characters of A-Z a-z 0-9 . _ -.
export function validTemplateName(name: string): boolean {
  return /^[A-Za-z0-9._-]{1,64}$/.test(name);
}

// What the editor starts from: a template being edited, or a new one.
interface Draft {
  name: string;
  config: string;
  existing: boolean;
  version: number; // remounts the editor, which owns its text while mounted
}

const NEW_CONFIG = 'resources:\n  priority: 42\n';

export function TemplatesPage() {
  const { session } = useSession();
  const list = useQuery(queries.templates());
  const [shown, setShown] = useState<string | null>(null);
  const [draft, setDraft] = useState<Draft>({ name: '', config: NEW_CONFIG, existing: false, version: 0 });
  useEffect(() => {
    document.title = 'Templates · Ringmaster';
  }, []);
  const data = list.data;
  const mayChange = (t: Template) => session?.role === 'admin' || session?.username === t.owner;
  const edit = (t: Template) =>
    setDraft((d) => ({ name: t.name, config: t.config, existing: true, version: d.version + 1 }));
  return (
    <section aria-labelledby="templates-title">
      <div className="page-head">
        <h1 id="templates-title">Templates</h1>
        {data && (
          <p className="muted">
            {data.total} {data.total === 1 ? 'template' : 'templates'}
          </p>
        )}
      </div>
      <p className="muted small">
        A template is a partial experiment config: an experiment created or forked with it gets the template’s keys
        under its own (<code>ring experiment create --template NAME</code>).
      </p>
      <StaleNotice error={data ? list.error : undefined} />
      {list.isPending && <Loading what="templates" />}
      {!data && list.error && <ErrorMessage what="templates" error={list.error} onRetry={() => void list.refetch()} />}
      {data &&
        (data.templates.length === 0 ? (
          <section className="panel" aria-label="Template list">
            <Empty title="No templates yet.">Save one below.</Empty>
          </section>
        ) : (
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Template list">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Owner</th>
                  <th scope="col">Updated</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.templates.map((t) => (
                  <tr key={t.name} data-template={t.name}>
                    <td>{t.name}</td>
                    <td>{t.owner}</td>
                    <td>{formatDateTime(t.updated_at)}</td>
                    <td className="actions">
                      <button
                        type="button"
                        className="btn btn-small"
                        aria-label={`Show template ${t.name}`}
                        aria-pressed={shown === t.name}
                        onClick={() => setShown(shown === t.name ? null : t.name)}
                      >
                        Show
                      </button>
                      {mayChange(t) && (
                        <>
                          <button
                            type="button"
                            className="btn btn-small"
                            aria-label={`Edit template ${t.name}`}
                            onClick={() => edit(t)}
                          >
                            Edit
                          </button>
                          <DeleteTemplate template={t} onDeleted={() => shown === t.name && setShown(null)} />
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {shown && <TemplateView name={shown} />}
      <section className="panel" aria-labelledby="save-template-title">
        <h2 id="save-template-title">{draft.existing ? `Edit template ${draft.name}` : 'New template'}</h2>
        <SaveTemplateForm
          key={draft.version}
          draft={draft}
          onSaved={(name) => setShown(name)}
          onNew={() => setDraft((d) => ({ name: '', config: NEW_CONFIG, existing: false, version: d.version + 1 }))}
        />
      </section>
    </section>
  );
}

// One template as the master stores it (GET /templates/{name}).
function TemplateView({ name }: { name: string }) {
  const titleId = useId();
  const one = useQuery({
    queryKey: [...keys.templates, name],
    queryFn: ({ signal }) => api.template(name, signal),
  });
  const t = one.data;
  return (
    <section className="panel" aria-labelledby={titleId}>
      <h2 id={titleId}>Template {name}</h2>
      {one.isPending && <Loading what="the template" />}
      {!t && one.error && <ErrorMessage what="the template" error={one.error} onRetry={() => void one.refetch()} />}
      {t && (
        <>
          <dl className="facts">
            <div>
              <dt>Owner</dt>
              <dd>{t.owner}</dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{formatDateTime(t.created_at)}</dd>
            </div>
            <div>
              <dt>Updated</dt>
              <dd>{formatDateTime(t.updated_at)}</dd>
            </div>
          </dl>
          <pre className="config" aria-label={`Config of template ${name}`}>
            {t.config}
          </pre>
        </>
      )}
    </section>
  );
}

function SaveTemplateForm({
  draft,
  onSaved,
  onNew,
}: {
  draft: Draft;
  onSaved: (name: string) => void;
  onNew: () => void;
}) {
  const nameId = useId();
  const queryClient = useQueryClient();
  const [name, setName] = useState(draft.name);
  const [config, setConfig] = useState(draft.config);
  const save = useMutation({
    mutationFn: () => api.putTemplate(name, config),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: keys.templates });
      onSaved(name);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const nameOk = validTemplateName(name);
  return (
    <form aria-label="Save a template" onSubmit={submit}>
      <label className="field" htmlFor={nameId}>
        Name
        <input
          id={nameId}
          value={name}
          readOnly={draft.existing}
          onChange={(e) => setName(e.target.value)}
          aria-describedby={nameOk || name === '' ? undefined : `${nameId}-hint`}
        />
      </label>
      {!nameOk && name !== '' && (
        <p id={`${nameId}-hint`} className="form-error">
          1 to 64 letters, digits, dots, dashes or underscores.
        </p>
      )}
      <YamlEditor value={draft.config} onChange={setConfig} marks={[]} label="Template config (YAML)" />
      {save.error && (
        <p className="form-error" role="alert">
          {failureText(save.error)}
        </p>
      )}
      {save.isSuccess && (
        <p className="notice" role="status">
          Template {name} saved.
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={!nameOk || save.isPending}>
          {save.isPending ? 'Saving…' : draft.existing ? 'Save changes' : 'Save template'}
        </button>
        {draft.existing && (
          <button type="button" className="btn" onClick={onNew}>
            New template instead
          </button>
        )}
      </div>
    </form>
  );
}

function DeleteTemplate({ template: t, onDeleted }: { template: Template; onDeleted: () => void }) {
  const queryClient = useQueryClient();
  return (
    <ConfirmButton
      label="Delete"
      name={`Delete template ${t.name}`}
      title={`Delete template ${t.name}?`}
      danger
      small
      run={() => api.deleteTemplate(t.name)}
      onDone={() => {
        onDeleted();
        void queryClient.invalidateQueries({ queryKey: keys.templates });
      }}
    >
      <p>Experiments created from it keep their configs; new ones can no longer name it.</p>
    </ConfirmButton>
  );
}
