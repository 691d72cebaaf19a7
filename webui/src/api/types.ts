// The REST API's shapes (docs/rest.md), as the pages read them.

export type RunState =
  | 'ACTIVE'
  | 'PAUSED'
  | 'STOPPING_COMPLETED'
  | 'STOPPING_CANCELED'
  | 'STOPPING_ERROR'
  | 'COMPLETED'
  | 'CANCELED'
  | 'ERROR';

export const RUN_STATES: RunState[] = [
  'ACTIVE',
  'PAUSED',
  'STOPPING_COMPLETED',
  'STOPPING_CANCELED',
  'STOPPING_ERROR',
  'COMPLETED',
  'CANCELED',
  'ERROR',
];

export interface SearcherSummary {
  name: string;
  metric: string;
  smaller_is_better: boolean;
  max_trials: number;
}

export interface Experiment {
  id: number;
  name: string;
  state: RunState;
  owner: string;
  config: string;
  progress: number;
  num_trials: number;
  best_trial_id: number | null;
  best_validation: number | null;
  created_at: string;
  ended_at: string | null;
  archived: boolean;
  description: string;
  labels: string[];
  searcher: SearcherSummary;
  resources?: {
    resource_pool: string;
    slots_per_trial: number;
    priority: number;
    weight: number;
    max_slots: number | null;
  };
}

export interface ExperimentList {
  experiments: Experiment[];
  total: number;
  facets: { owners: string[]; labels: string[] };
}

export type Hparams = Record<string, unknown>;

export interface Trial {
  id: number;
  experiment_id: number;
  state: RunState;
  hparams: Hparams;
  seed: number;
  restarts: number;
  total_batches: number;
  best_validation: number | null;
  latest_checkpoint: string | null;
  request_id: number | null;
  searcher_operation: { length: number } | null;
  last_exit_reason?: string | null;
  created_at: string;
  ended_at: string | null;
}

export interface TrialList {
  trials: Trial[];
  total: number;
}

export type MetricKind = 'training' | 'validation';

export interface MetricReport {
  batches: number;
  metrics: Record<string, number | null>;
  reported_at?: string;
}

export interface TrialMetrics {
  metrics: MetricReport[];
  total: number;
  downsampled: boolean;
}

export interface TrialSeries {
  trial_id: number;
  batches: number[];
  values: number[];
  total: number;
}

export interface ExperimentMetrics {
  kind: MetricKind;
  metric: string | null;
  metric_names: string[];
  series: TrialSeries[];
}

export interface Allocation {
  id: string;
  trial_id: number;
  state: string;
  slots: number;
  placements: unknown;
  exit_reason: string | null;
  exit_code: number | null;
  created_at: string;
  ended_at: string | null;
}

export interface Checkpoint {
  uuid: string;
  trial_id: number;
  allocation_id: string;
  batches: number;
  state: 'ACTIVE' | 'DELETED';
  resources: { path: string; size: number; sha256: string }[];
  validation_metric?: number | null;
  created_at: string;
}

export interface LogLine {
  id: number;
  allocation_id: string;
  rank: number;
  stream: string;
  line: string;
  ts_ms: number;
}

export interface LogPage {
  logs: LogLine[];
  offset: number;
  trial_state: RunState;
}

export interface Slot {
  id: number;
  type: string;
  uuid: string;
  allocation_id: string | null;
}

export interface Agent {
  id: string;
  pool: string;
  state: string;
  address: string;
  slots: Slot[];
  enabled: boolean;
  draining: boolean;
  last_seen_at: string;
}

export interface Job {
  allocation_id: string;
  trial_id: number;
  experiment_id: number;
  owner: string;
  state: string;
  slots: number;
  pool: string;
  priority: number;
  weight: number;
  queued_at: string;
  preempting: boolean;
  position: number | null;
  pending_reason: string | null;
}

export interface Pool {
  name: string;
  configured: boolean;
  description: string;
  scheduler: string;
  preemption: boolean;
  fitting_policy: string;
  agents: number;
  agents_connected: number;
  slots: number;
  slots_used: number;
  jobs_running: number;
  jobs_pending: number;
}

export type ExperimentAction = 'pause' | 'activate' | 'kill' | 'archive' | 'unarchive';

// POST /api/v1/auth/login answers the token and the user it belongs to.
export interface User {
  id: number;
  username: string;
  role: string; // "admin" may act on every experiment; anyone else on their own
}

export interface LoginAnswer {
  token: string;
  expires_at: string;
  user: User;
}
