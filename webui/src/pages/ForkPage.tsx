// Fork an experiment from an editor: its config in a YAML editor, "Check"
// asks the master (POST /experiments/check) and marks each problem at its
// line, and "Create fork" submits a new experiment running the parent's
// model definition (POST /experiments with forked_from, as `ring experiment
// fork` does) and opens it. A stored template can be chosen to lay the config
// over, and the project it goes to (its parent's by default). This page and its editor are a chunk of their own (routes.tsx).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { ConfigIssue, Experiment } from '../api/types';
import { ErrorMessage, Loading } from '../components/DataState';
import { ProjectOptions, useProjectTargets } from '../components/MoveDialog';
import { YamlEditor } from '../components/YamlEditor';
import { issueMarks, issueText, refusedIssues } from '../lib/configIssues';
import { paths } from '../paths';

interface Findings {
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
  valid: boolean;
}

export function ForkPage({ id }: { id: number }) {
  const parent = useQuery({ ...queries.experiment(id, 0), refetchOnWindowFocus: false });
  useEffect(() => {
    document.title = `Fork experiment ${id} · Ringmaster`;
  }, [id]);
  if (parent.isPending) return <Loading what={`experiment ${id}`} />;
  if (!parent.data)
    return <ErrorMessage what={`experiment ${id}`} error={parent.error} onRetry={() => void parent.refetch()} />;
  return <ForkEditor parent={parent.data} />;
}

function ForkEditor({ parent }: { parent: Experiment }) {
  const [text, setText] = useState(parent.config);
  const [template, setTemplate] = useState('');
  const [findings, setFindings] = useState<Findings | null>(null);
  const [project, setProject] = useState(parent.project_id ?? 0);
  const targets = useProjectTargets();
  // The parent's project is the master's default for a fork: named only when another.
  const projectId = project && project !== parent.project_id ? project : undefined;
  const templates = useQuery(queries.templates());
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const templateId = useId();
  const projectSelectId = useId();

  const check = useMutation({
    mutationFn: () => api.checkConfig(text, template || undefined, projectId),
    onSuccess: (answer) => setFindings(answer),
  });
  const create = useMutation({
    mutationFn: () => api.forkExperiment(parent.id, text, template || undefined, projectId),
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: keys.experiments });
      navigate(paths.experiment(created.id));
    },
    onError: (e) => {
      const refused = refusedIssues(e);
      if (refused) setFindings({ ...refused, valid: false });
    },
  });
  const busy = check.isPending || create.isPending;
  const marks = useMemo(() => (findings ? issueMarks(text, findings.errors, findings.warnings) : []), [text, findings]);
  const failure = check.error ?? (create.error && !refusedIssues(create.error) ? create.error : null);

  return (
    <section aria-labelledby="fork-title">
      <p className="crumbs">
        <Link to={paths.experiments()}>Experiments</Link> /{' '}
        <Link to={paths.experiment(parent.id)}>
          {parent.name} #{parent.id}
        </Link>{' '}
        / fork
      </p>
      <div className="page-head">
        <h1 id="fork-title">Fork experiment {parent.id}</h1>
      </div>
      <p className="muted">
        The new experiment runs the model definition of experiment {parent.id} with the config below. Change what you
        like, check it, then create it.
      </p>
      <section className="panel" aria-labelledby="config-edit-title">
        <div className="panel-head">
          <h2 id="config-edit-title">experiment.yaml</h2>
          {targets.groups.length > 0 && (
            <label className="inline-field" htmlFor={projectSelectId}>
              Project
              <select id={projectSelectId} value={project} onChange={(e) => setProject(Number(e.target.value))}>
                {!targets.groups.some((g) => g.projects.some((p) => p.id === parent.project_id)) && (
                  <option value={parent.project_id ?? 0}>
                    {parent.workspace && parent.project ? `${parent.workspace} / ${parent.project}` : 'its parent’s'}
                  </option>
                )}
                <ProjectOptions groups={targets.groups} here={parent.project_id} />
              </select>
            </label>
          )}
          {templates.data && templates.data.templates.length > 0 && (
            <label className="inline-field" htmlFor={templateId}>
              Template
              <select id={templateId} value={template} onChange={(e) => setTemplate(e.target.value)}>
                <option value="">None</option>
                {templates.data.templates.map((t) => (
                  <option key={t.name} value={t.name}>
                    {t.name}
                  </option>
                ))}
              </select>
            </label>
          )}
        </div>
        <YamlEditor value={parent.config} onChange={setText} marks={marks} label="Experiment config (YAML)" />
        <div className="form-actions">
          <button type="button" className="btn" disabled={busy} onClick={() => check.mutate()}>
            {check.isPending ? 'Checking…' : 'Check'}
          </button>
          <button type="button" className="btn btn-primary" disabled={busy} onClick={() => create.mutate()}>
            {create.isPending ? 'Creating…' : 'Create fork'}
          </button>
          <Link to={paths.experiment(parent.id)} className="btn">
            Cancel
          </Link>
        </div>
        {failure && (
          <p className="form-error" role="alert">
            {failureText(failure)}
          </p>
        )}
        <FindingList findings={findings} />
      </section>
    </section>
  );
}

function FindingList({ findings }: { findings: Findings | null }) {
  if (!findings) return null;
  const { errors, warnings } = findings;
  if (errors.length === 0 && warnings.length === 0)
    return (
      <p className="notice" role="status">
        The master found no problem in this config.
      </p>
    );
  return (
    <div className="config-issues" role={errors.length ? 'alert' : 'status'}>
      {errors.length > 0 && (
        <>
          <h3>
            {errors.length} {errors.length === 1 ? 'problem' : 'problems'}
          </h3>
          <ul>
            {errors.map((e, i) => (
              <li key={i} className="issue issue-error" data-line={e.line} data-path={e.path}>
                {issueText(e)}
              </li>
            ))}
          </ul>
        </>
      )}
      {warnings.length > 0 && (
        <>
          <h3>
            {warnings.length} {warnings.length === 1 ? 'warning' : 'warnings'}
          </h3>
          <ul>
            {warnings.map((w, i) => (
              <li key={i} className="issue issue-warning" data-line={w.line} data-path={w.path}>
                {issueText(w)}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
