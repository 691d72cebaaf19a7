// An agent's slots as squares, each coloured by the allocation holding it
// (the same colour on every agent of a multi-agent trial); a held slot links
// to its trial.
import type { Agent, Job } from '../api/types';
import { slotViews } from '../lib/cluster';
import { Link } from 'react-router';
import { paths } from '../paths';

export function SlotGrid({ agent, jobs }: { agent: Agent; jobs: Job[] }) {
  const slots = slotViews(agent, jobs);
  if (slots.length === 0) return <p className="muted">No slots.</p>;
  return (
    <ul className="slot-grid" aria-label={`Slots of ${agent.id}`}>
      {slots.map((s) => (
        <li key={s.slotId} className="slot-cell">
          {s.allocationId && s.trialId ? (
            <Link
              to={paths.trial(s.trialId)}
              className="slot slot-used"
              style={{ background: s.color ?? undefined }}
              aria-label={s.label}
              title={s.label}
              data-allocation={s.allocationId}
            >
              <span className="slot-id">{s.slotId}</span>
            </Link>
          ) : (
            <span className="slot slot-free" aria-label={s.label} title={s.label} role="img">
              <span className="slot-id">{s.slotId}</span>
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}
