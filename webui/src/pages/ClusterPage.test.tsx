import { screen, within } from '@testing-library/react';
import { render } from '../test/render';
import { describe, expect, it, vi } from 'vitest';
import { agent, fakeFetch, job, json, pool } from '../test/fixtures';
import { ClusterPage } from './ClusterPage';

describe('ClusterPage', () => {
  it('shows pools, slots coloured by allocation and why jobs wait', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/agents': () =>
          json({
            agents: [
              {
                ...agent('agent-1', ['3.0', '4.0']),
                container_runtimes: [{ name: 'podman', version: '4.3.1', rootless: false }],
              },
              { ...agent('agent-2', [null, null]), runs_as_owner: false },
            ],
            total: 2,
          }),
        '/api/v1/jobs': () =>
          json({
            jobs: [
              job('3.0'),
              job('4.0'),
              job('5.0', { state: 'PENDING', position: 1, pending_reason: 'waiting for 1 free slot in pool default' }),
              job('6.0', {
                pool: 'hpc',
                slurm_job_id: 41,
                slurm_state: 'PENDING',
                slurm_pending_reason: 'it waits for free nodes in the partition (Slurm: Resources)',
                why_waiting: 'in Slurm: it waits for free nodes in the partition (Slurm: Resources)',
              }),
            ],
            total: 4,
          }),
        '/api/v1/pools': () =>
          json({
            pools: [
              {
                name: 'default',
                configured: true,
                description: '',
                scheduler: 'priority',
                preemption: true,
                fitting_policy: 'best',
                resource_manager: 'agent',
                task_identity: 'agent',
                agents: 2,
                agents_connected: 2,
                slots: 4,
                slots_used: 2,
                jobs_running: 2,
                jobs_pending: 1,
              },
              pool({ name: 'hpc', scheduler: 'fair_share', resource_manager: 'slurm', task_identity: 'single' }),
            ],
            total: 2,
          }),
      }).fn,
    );
    render(<ClusterPage />);
    expect(await screen.findByText('2 of 4 slots in use on 2 agents')).toBeTruthy();
    expect(screen.getByText(/Priority scheduling, best fit, preemption on/)).toBeTruthy();
    const slots1 = screen.getByRole('list', { name: 'Slots of agent-1' });
    expect(
      within(slots1)
        .getAllByRole('link')
        .map((a) => a.getAttribute('href')),
    ).toEqual(['/trials/3', '/trials/4']);
    // Each agent says whether it runs tasks as their owners or in single-user mode.
    const card1 = screen.getByRole('heading', { name: 'agent-1' }).closest('li')!;
    expect(within(card1 as HTMLElement).getByText('runs tasks as their owners')).toBeTruthy();
    const card2 = screen.getByRole('heading', { name: 'agent-2' }).closest('li')!;
    expect(within(card2 as HTMLElement).getByText('single-user')).toBeTruthy();
    // And which container runtimes it has, "none" when it has none.
    expect(within(card1 as HTMLElement).getByText('containers: podman 4.3.1')).toBeTruthy();
    expect(within(card2 as HTMLElement).getByText('containers: none')).toBeTruthy();
    const slots2 = screen.getByRole('list', { name: 'Slots of agent-2' });
    expect(within(slots2).queryAllByRole('link')).toHaveLength(0);
    const waiting = (await screen.findByText('waiting for 1 free slot in pool default')).closest('tr')!;
    expect(within(waiting).getByText('Pending')).toBeTruthy();
    expect(
      within(screen.getByRole('list', { name: 'Allocations holding slots' })).getAllByRole('listitem'),
    ).toHaveLength(2);
    // On a Slurm pool: the job's Slurm job id and Slurm's reason in words.
    const inSlurm = screen
      .getByText('in Slurm: it waits for free nodes in the partition (Slurm: Resources)')
      .closest('tr')!;
    expect(within(inSlurm).getByText('Slurm job 41 (PENDING)')).toBeTruthy();
    // A single-identity Slurm pool says what it gives up.
    const hpc = document.querySelector('[data-pool="hpc"]') as HTMLElement;
    expect(within(hpc).getByText(/single identity: every task runs as the master’s account/)).toBeTruthy();
  });

  it("shows a Slurm pool's jobs with their Slurm job, state and the reason `ring job list` gives", async () => {
    const slurmReason = 'it waits for free nodes in the partition (Slurm: Resources)';
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/agents': () => json({ agents: [], total: 0 }),
        '/api/v1/jobs': () =>
          json({
            jobs: [
              job('7.0', { pool: 'hpc', slurm_job_id: 41, slurm_state: 'RUNNING' }),
              job('8.0', {
                pool: 'hpc',
                slurm_job_id: 42,
                slurm_state: 'PENDING',
                slurm_pending_reason: slurmReason,
                why_waiting: `in Slurm: ${slurmReason}`,
              }),
            ],
            total: 2,
          }),
        '/api/v1/pools': () => json({ pools: [], total: 0 }),
      }).fn,
    );
    render(<ClusterPage />);
    await screen.findByText('Slurm job 41 (RUNNING)');
    const queue = screen.getAllByRole('region', { name: 'Job queue' }).at(-1)!;
    const running = within(queue).getByText('Slurm job 41 (RUNNING)').closest('tr')!;
    expect(within(running).getByText('running')).toBeTruthy();
    const waiting = within(queue).getByText('Slurm job 42 (PENDING)').closest('tr')!;
    expect(within(waiting).getByText(`in Slurm: ${slurmReason}`)).toBeTruthy();
    expect(waiting.getAttribute('data-allocation')).toBe('8.0');
  });

  it('shows a command in the queue with its kind, owner and why it waits', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/agents': () => json({ agents: [], total: 0 }),
        '/api/v1/jobs': () =>
          json({
            jobs: [
              job('command-12.0', {
                kind: 'COMMAND',
                task_id: 12,
                trial_id: null,
                experiment_id: null,
                owner: 'ada',
                state: 'PENDING',
                position: 1,
                pending_reason: 'needs 1 slot on one agent',
                why_waiting: 'needs 1 slot on one agent',
              }),
            ],
            total: 1,
          }),
        '/api/v1/pools': () => json({ pools: [], total: 0 }),
      }).fn,
    );
    render(<ClusterPage />);
    const label = await screen.findByText('command 12');
    const row = label.closest('tr')!;
    expect(row.getAttribute('data-allocation')).toBe('command-12.0');
    expect(within(row).getByText('ada')).toBeTruthy();
    expect(within(row).getByText('needs 1 slot on one agent')).toBeTruthy();
  });

  it("marks another user's private job without naming them", async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/agents': () => json({ agents: [], total: 0 }),
        '/api/v1/jobs': () =>
          json({
            jobs: [
              job('trial-7.0', {
                kind: 'TRIAL',
                task_id: 7,
                trial_id: null,
                experiment_id: null,
                owner: '',
                private: true,
                state: 'PENDING',
                position: 1,
              }),
            ],
            total: 1,
          }),
        '/api/v1/pools': () => json({ pools: [], total: 0 }),
      }).fn,
    );
    render(<ClusterPage />);
    const mark = await screen.findByText('another user’s (private)');
    const row = mark.closest('tr')!;
    expect(row.getAttribute('data-allocation')).toBe('trial-7.0');
    expect(within(row).queryByRole('link')).toBeNull();
  });

  it('shows shells and notebooks in the queue with their owner, slots, state and reason', async () => {
    const task = (kind: 'SHELL' | 'NOTEBOOK', id: number, over: Parameters<typeof job>[1]) =>
      job(`${kind.toLowerCase()}-${id}.0`, { kind, task_id: id, trial_id: null, experiment_id: null, ...over });
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/agents': () => json({ agents: [agent('agent-1', ['shell-14.0', 'shell-14.0'])], total: 1 }),
        '/api/v1/jobs': () =>
          json({
            jobs: [
              task('SHELL', 14, { owner: 'alice', slots: 2 }),
              task('NOTEBOOK', 15, {
                owner: 'bob',
                state: 'PENDING',
                position: 1,
                pending_reason:
                  'needs 1 slot on one agent (it is one process); largest free block in pool default is 0',
              }),
            ],
            total: 2,
          }),
        '/api/v1/pools': () => json({ pools: [], total: 0 }),
      }).fn,
    );
    render(<ClusterPage />);
    const queue = (await screen.findAllByRole('region', { name: 'Job queue' })).at(-1)!;
    const shell = (await within(queue).findByText('shell 14')).closest('tr')!;
    expect(within(shell).getByText('alice')).toBeTruthy();
    expect(within(shell).getByText('Running')).toBeTruthy();
    expect(within(shell).getByText('2')).toBeTruthy();
    const notebook = within(queue).getByText('notebook 15').closest('tr')!;
    expect(within(notebook).getByText('bob')).toBeTruthy();
    expect(within(notebook).getByText('Pending')).toBeTruthy();
    expect(within(notebook).getByText(/largest free block in pool default is 0/)).toBeTruthy();
    // The slot grid's legend names the shell holding the slots.
    expect(screen.getByText(/allocation shell-14\.0/).textContent).toContain('shell 14');
  });

  it('explains an empty cluster', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/agents': () => json({ agents: [], total: 0 }),
        '/api/v1/jobs': () => json({ jobs: [], total: 0 }),
        '/api/v1/pools': () => json({ pools: [], total: 0 }),
      }).fn,
    );
    render(<ClusterPage />);
    expect(await screen.findByText('No agents have connected.')).toBeTruthy();
    expect(await screen.findByText('The queue is empty.')).toBeTruthy();
  });
});
