// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { agent, job, pool } from '../test/fixtures';
import {
  allocationColor,
  identityOf,
  slotUsage,
  slotViews,
  slurmJobOf,
  splitQueue,
  trialOfAllocation,
  whyWaiting,
} from './cluster';

describe('cluster', () => {
  it('gives an allocation the same colour everywhere', () => {
    expect(allocationColor('7.0')).toBe(allocationColor('7.0'));
    const colours = new Set(
      ['9.0', '10.0', '11.0', '12.0', '13.0', '14.0', '15.0', '16.0', '17.0', '18.0'].map(allocationColor),
    );
    expect(colours.size).toBe(10); // ten neighbouring trials, ten colours
    expect(allocationColor('9.1')).not.toBe(allocationColor('9.0'));
    expect(allocationColor('odd-id')).toBe(allocationColor('odd-id'));
  });
  it('says what each slot holds', () => {
    const a = agent('agent-1', ['7.0', null]);
    const views = slotViews(a, [job('7.0', { experiment_id: 3 })]);
    expect(views[0]).toMatchObject({ allocationId: '7.0', trialId: 7, experimentId: 3, color: allocationColor('7.0') });
    expect(views[0].label).toBe('agent-1 slot 0 (cpu): allocation 7.0, trial 7, experiment 3');
    expect(views[1]).toMatchObject({ allocationId: null, color: null, label: 'agent-1 slot 1 (cpu): free' });
    expect(trialOfAllocation('12.3')).toBe(12);
    expect(trialOfAllocation('x')).toBeNull();
  });
  it('counts slots and splits the queue', () => {
    expect(slotUsage([agent('a', ['1.0', null]), agent('b', ['2.0', '2.0'])])).toEqual({ used: 3, total: 4 });
    const q = splitQueue([job('1.0'), job('2.0', { position: 1, pending_reason: 'no free slot' })]);
    expect(q.running.map((j) => j.allocation_id)).toEqual(['1.0']);
    expect(q.pending.map((j) => j.allocation_id)).toEqual(['2.0']);
  });
  it('says why a job waits, in Slurm’s words on a Slurm pool', () => {
    expect(whyWaiting(job('1.0'))).toBe('running');
    expect(whyWaiting(job('2.0', { position: 1, pending_reason: 'no free slot', why_waiting: 'no free slot' }))).toBe(
      'no free slot',
    );
    const inSlurm = job('3.0', {
      slurm_job_id: 41,
      slurm_state: 'PENDING',
      slurm_pending_reason: 'it waits for free nodes in the partition (Slurm: Resources)',
      why_waiting: 'in Slurm: it waits for free nodes in the partition (Slurm: Resources)',
    });
    expect(whyWaiting(inSlurm)).toBe('in Slurm: it waits for free nodes in the partition (Slurm: Resources)');
    expect(slurmJobOf(inSlurm)).toBe('Slurm job 41 (PENDING)');
    expect(slurmJobOf(job('4.0'))).toBeNull();
  });
  it('says whose account runs a pool’s tasks', () => {
    const base = { name: 'hpc', resource_manager: 'slurm' as const };
    expect(identityOf({ ...pool(), ...base, task_identity: 'owner' }).shared).toBe(false);
    const single = identityOf({ ...pool(), ...base, task_identity: 'single' });
    expect(single.shared).toBe(true);
    expect(single.text).toContain('single identity');
    expect(identityOf(pool()).text).toContain('agents');
  });
});
