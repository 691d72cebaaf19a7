// The REST API's shapes, as the pages name them: aliases of the types that
// openapi-typescript generates from docs/openapi.json (src/api/openapi.d.ts,
// made by `npm run generate` before every build, typecheck and test), so the
// UI reads exactly what the document describes and the tests check the
// master answers.
import type { components, paths } from './openapi';

type Schemas = components['schemas'];

export type RunState = Schemas['RunState'];

// Every run state, in lifecycle order; the Record makes the compiler insist
// on each state the document lists, and on no other.
const RUN_STATE_SET: Record<RunState, true> = {
  ACTIVE: true,
  PAUSED: true,
  STOPPING_COMPLETED: true,
  STOPPING_CANCELED: true,
  STOPPING_ERROR: true,
  COMPLETED: true,
  CANCELED: true,
  ERROR: true,
};
export const RUN_STATES = Object.keys(RUN_STATE_SET) as RunState[];

export type SearcherSummary = Schemas['SearcherSummary'];
export type Experiment = Schemas['Experiment'];
export type ExperimentList = Schemas['ExperimentList'];
export type Hparams = Schemas['Trial']['hparams'];
export type Trial = Schemas['Trial'];
export type LogPolicyMatch = Schemas['LogPolicyMatch'];
export type TrialList = Schemas['TrialList'];
export type MetricKind = Schemas['MetricKind'];
export type MetricReport = Schemas['MetricReport'];
export type TrialMetrics = Schemas['TrialMetrics'];
export type TrialSeries = Schemas['TrialSeries'];
export type ExperimentMetrics = Schemas['ExperimentMetrics'];
export type Allocation = Schemas['Allocation'];
export type AllocationList = Schemas['AllocationList'];
export type Checkpoint = Schemas['Checkpoint'];
export type CheckpointList = Schemas['CheckpointList'];
export type LogLine = Schemas['LogLine'];
export type LogPage = Schemas['LogPage'];
export type Slot = Schemas['Slot'];
export type Agent = Schemas['Agent'];
export type AgentList = Schemas['AgentList'];
export type Job = Schemas['Job'];
export type JobList = Schemas['JobList'];
export type Pool = Schemas['Pool'];
export type PoolList = Schemas['PoolList'];
export type ExperimentQuery = NonNullable<paths['/api/v1/experiments']['get']['parameters']['query']>;
export type ExperimentSort = NonNullable<ExperimentQuery['sort']>;
export type ExperimentAction = paths['/api/v1/experiments/{id}/{action}']['post']['parameters']['path']['action'];
// POST /api/v1/auth/login answers the token and the user it belongs to; an
// admin may act on every experiment, anyone else on their own.
export type User = Schemas['User'];
export type UserList = Schemas['UserList'];
export type UnixAccount = Schemas['UnixAccount'];
export type UserPatch = NonNullable<paths['/api/v1/users/{id}']['patch']['requestBody']>['content']['application/json'];
export type LoginAnswer = Schemas['LoginAnswer'];
export type LogoutAnswer = paths['/api/v1/auth/logout']['post']['responses'][200]['content']['application/json'];

// Tasks that are not trials: shells (and commands, whose shape they share).
export type Shell = Schemas['Shell'];
export type ShellList = Schemas['ShellList'];
export type TaskStart = NonNullable<paths['/api/v1/shells']['post']['requestBody']>['content']['application/json'];
export type TerminalTicket =
  paths['/api/v1/shells/{id}/terminal/ticket']['post']['responses'][200]['content']['application/json'];
export type ProxyLink = paths['/api/v1/tasks/{id}/proxy/link']['post']['responses'][200]['content']['application/json'];
// A notebook: a task like a shell, whose `service` (its Jupyter, once it
// announced itself to the task proxy) says when it can be opened.
export type Notebook = Schemas['Notebook'];
export type NotebookList = Schemas['NotebookList'];

// Renaming, describing, labelling an experiment (and its scheduling fields).
export type ExperimentPatch = NonNullable<
  paths['/api/v1/experiments/{id}']['patch']['requestBody']
>['content']['application/json'];
// One problem or warning of an experiment config: its key path and YAML line.
export type ConfigIssue = Schemas['ConfigIssue'];
export type ConfigCheckAnswer = Schemas['ConfigCheckAnswer'];
export type ExperimentCreated = Schemas['ExperimentCreated'];
export type Template = Schemas['Template'];

// The model registry: named models whose numbered versions are registered
// checkpoints (docs/rest.md, "Models").
export type Model = Schemas['Model'];
export type ModelVersion = Schemas['ModelVersion'];
export type ModelList = paths['/api/v1/models']['get']['responses'][200]['content']['application/json'];
export type ModelVersionList =
  paths['/api/v1/models/{name}/versions']['get']['responses'][200]['content']['application/json'];
export type ModelCreate = NonNullable<paths['/api/v1/models']['post']['requestBody']>['content']['application/json'];
export type VersionRegister = NonNullable<
  paths['/api/v1/models/{name}/versions']['post']['requestBody']
>['content']['application/json'];
export type VersionPatch = NonNullable<
  paths['/api/v1/models/{name}/versions/{version}']['patch']['requestBody']
>['content']['application/json'];

// Webhooks: URLs the master posts to when an experiment reaches a state or a
// trial's log line matches (docs/rest.md, "Webhooks").
export type Webhook = Schemas['Webhook'];
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type WebhookTrigger = Schemas['WebhookTrigger'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookCreate = NonNullable<
  paths['/api/v1/webhooks']['post']['requestBody']
>['content']['application/json'];

// Workspaces and their projects: every experiment is in a project of a
// workspace (docs/rest.md, "Workspaces and projects").
export type Workspace = Schemas['Workspace'];
export type WorkspaceList = Schemas['WorkspaceList'];
export type WorkspaceRole = Schemas['WorkspaceRole'];
export type Project = Schemas['Project'];
export type ProjectList = Schemas['ProjectList'];
export type ExperimentMoved = Schemas['ExperimentMoved'];
export type WorkspaceCreate = NonNullable<
  paths['/api/v1/workspaces']['post']['requestBody']
>['content']['application/json'];
export type WorkspacePatch = NonNullable<
  paths['/api/v1/workspaces/{id}']['patch']['requestBody']
>['content']['application/json'];
export type ProjectCreate = NonNullable<
  paths['/api/v1/workspaces/{id}/projects']['post']['requestBody']
>['content']['application/json'];
export type ProjectPatch = NonNullable<
  paths['/api/v1/projects/{id}']['patch']['requestBody']
>['content']['application/json'];
