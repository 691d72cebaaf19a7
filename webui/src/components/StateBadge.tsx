import { stateLabel } from '../lib/format';

// A run, allocation or agent state as a coloured pill; the text carries the
// meaning, the colour only repeats it.
export function StateBadge({ state }: { state: string }) {
  const tone = toneOf(state);
  return <span className={`badge badge-${tone}`}>{stateLabel(state)}</span>;
}

export function toneOf(state: string): 'active' | 'paused' | 'stopping' | 'done' | 'error' | 'muted' {
  const s = state.toUpperCase();
  if (s === 'ACTIVE' || s === 'RUNNING' || s === 'CONNECTED' || s === 'STARTING' || s === 'ASSIGNED') return 'active';
  if (s === 'PAUSED' || s === 'PENDING' || s === 'DISCONNECTED') return 'paused';
  if (s.startsWith('STOPPING') || s === 'TERMINATING') return 'stopping';
  if (s === 'COMPLETED') return 'done';
  if (s === 'ERROR' || s === 'LOST') return 'error';
  return 'muted';
}
