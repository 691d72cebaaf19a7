#!/usr/bin/env node
// End-to-end test of the web UI in a real browser against a real cluster.
//
// Starts ringmaster (its admin's password from a random 0600 file) and two
// ringagents (2 CPU slots each) from the build on 127.0.0.1 (free ports),
// signs the ring CLI in (`ring user login`, with its own XDG_CONFIG_HOME),
// runs the example grid search (configs/experiments/quadratic-grid.yaml) to
// the end, starts a slow random search that keeps slots busy and jobs
// waiting, then drives Debian's chromium (headless, through playwright-core):
// the sign-in page (a wrong password, then the right one), then the five
// pages: experiments, experiment (one curve per trial), trial (logs), cluster
// (slots, each agent's mode), users (create, link a Unix account, deactivate).
// It kills the slow search through the UI, checks a narrow window,
// keyboard focus, the number of requests while idle, signing out, a revoked
// token sending the browser back to the sign-in page (and signing in
// returning to the page), that a user who is not an admin gets no actions on
// admin's experiments; then renames and relabels an experiment, filters the
// list by the new label, forks an experiment from the editor (a misspelt key
// marked on its line by the master's check first, then one hyperparameter
// changed, and the fork run to the end) and bulk-archives two experiments;
// continues the grid's best trial as a new experiment from its dialog (a
// length its checkpoint reached refused first) and follows the links both
// ways, changes the retention of that ended experiment and continues its
// trial there (in place), and registers the
// grid's best checkpoint as the first version of a new model, found on the
// model's page and the Models page; on the Webhooks page, the master's
// refusal of a URL off its (here empty) allow list is shown. The experiment
// page's heat map has a cell per grid point; Compare (from the list's
// selection) draws the trials of the grid and its fork on one chart and
// lists them, and takes trials added and removed by id. It creates a
// workspace (a taken name refused at its field), a project in it (renamed
// from its Edit dialog), adds a
// member and binds a pool, moves an experiment there with the bulk Move and
// finds it by filtering the list by that project.
// Every page it visits is checked with axe-core (WCAG 2.1 A and AA), and it
// checks that the console stayed free of errors, and that every
// API answer the browser got is one docs/openapi.json describes (checked by
// tests/openapi/check_answers.mjs, as the C++ tests' answers are); it saves
// screenshots in RING_ARTIFACTS_DIR and stops every process it started.
//
// Environment (CTest sets them): RING_BIN_DIR, RING_BUILD_DIR,
// RING_SOURCE_DIR, RING_ARTIFACTS_DIR; CHROMIUM (default /usr/bin/chromium);
// RING_E2E_HEADED=1 shows the browser.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Cluster, binDir, buildDir, check, checkA11y, chromiumPath, sourceDir, waitFor, webuiDir } from './harness.mjs';

const artifacts = process.env.RING_ARTIFACTS_DIR ?? path.join(buildDir, 'test-artifacts', 'webui');
const modelDir = path.join(buildDir, 'examples', 'quadratic', 'model');
const cluster = new Cluster('webui-e2e', artifacts);
const log = (...args) => cluster.log(...args);
const { tmp, adminPassword, passwordFile } = cluster;

// The CLI keeps its token under its own config folder here, and this
// script's own API reads send a token of their own.
const configHome = path.join(tmp, 'config');
const ringEnv = { ...process.env, XDG_CONFIG_HOME: configHome };
delete ringEnv.RING_TOKEN;
let apiToken = null;

async function getJson(url, token = apiToken) {
  const res = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return res.json();
}

function runRing(url, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(binDir, 'ring'), ['-m', url, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: ringEnv,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`ring ${args.join(' ')} exited ${code}: ${err || out}`)),
    );
  });
}

async function submit(url, configPath) {
  const out = await runRing(url, ['--json', 'experiment', 'create', configPath, modelDir]);
  const id = JSON.parse(out).id;
  check(Number.isInteger(id), `experiment create answered ${out}`);
  return id;
}

async function main() {
  for (const [what, p] of [
    ['ringmaster', path.join(binDir, 'ringmaster')],
    ['ringagent', path.join(binDir, 'ringagent')],
    ['ring', path.join(binDir, 'ring')],
    ['the built web UI (build the webui target)', path.join(webuiDir, 'index.html')],
    ['the quadratic model folder (build quadratic_model)', path.join(modelDir, 'run.sh')],
    ['chromium (run deploy/install-deps.sh)', chromiumPath],
  ])
    check(fs.existsSync(p), `${what} is missing: ${p}`);
  fs.rmSync(artifacts, { recursive: true, force: true }); // nothing stale from an earlier run
  fs.mkdirSync(artifacts, { recursive: true });

  // The cluster; this script is signed in (REST) as admin, and the CLI too
  // (its token file). Trials run as this script's user and use its
  // temporary folders; the cluster page shows the agents' mode.
  await cluster.startMaster();
  const url = cluster.url;
  apiToken = cluster.adminToken;
  const anonymous = await fetch(`${url}/api/v1/agents`);
  check(anonymous.status === 401, `the API answers ${anonymous.status} without a token, want 401`);
  check((await fetch(`${url}/api/v1/health`)).ok, 'the health check needs no token');
  await runRing(url, ['user', 'login', 'admin', '--password-file', passwordFile]);
  check(
    fs.existsSync(path.join(configHome, 'ring', 'tokens.json')),
    'ring user login keeps its token in $XDG_CONFIG_HOME/ring/tokens.json',
  );
  for (const id of ['agent-1', 'agent-2']) await cluster.startAgent(id, 2);

  // A finished search: the example grid (8 trials, 4 at a time).
  const grid = await submit(url, path.join(sourceDir, 'configs/experiments/quadratic-grid.yaml'));
  log(`grid search is experiment ${grid}; waiting for it to complete`);
  await runRing(url, ['experiment', 'wait', String(grid)]);
  const gridTrials = (await getJson(`${url}/api/v1/experiments/${grid}/trials`)).trials;
  check(gridTrials.length === 8, `the grid has ${gridTrials.length} trials, want 8`);
  const bestTrial = (await getJson(`${url}/api/v1/experiments/${grid}`)).best_trial_id;

  // A slow search that holds every slot and leaves jobs waiting.
  const slowConfig = path.join(tmp, 'slow-random.yaml');
  fs.writeFileSync(
    slowConfig,
    `name: slow-random
description: A slow random search that keeps the cluster busy (web UI e2e)
labels: [e2e, busy]
entrypoint: sh run.sh
hyperparameters:
  learning_rate: {type: log, base: 10, minval: -3, maxval: -1}
  momentum: {type: double, minval: 0.0, maxval: 0.9}
  batch_size: 32
  report_every: 20
  batch_sleep_ms: 20
  checkpoint_every: 1000
searcher:
  name: random
  metric: validation_loss
  smaller_is_better: true
  max_trials: 6
  max_concurrent_trials: 6
  max_length:
    batches: 100000
resources:
  slots_per_trial: 1
max_restarts: 0
`,
  );
  const slow = await submit(url, slowConfig);
  await waitFor(
    'the slow search to hold all 4 slots',
    async () => {
      const agents = (await getJson(`${url}/api/v1/agents`)).agents;
      return agents.flatMap((a) => a.slots).filter((s) => s.allocation_id).length === 4;
    },
    60000,
  );
  log(`slow search is experiment ${slow}; all slots busy`);

  // The browser.
  const browser = await cluster.launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  cluster.recordAnswers(page);
  const problems = [];
  let revokedToken = null; // the browser's token after it signed out
  // Expected 401s: a wrong password, and requests with the revoked token.
  const expected401 = async (r) => {
    if (r.status() !== 401) return false;
    if (r.url() === `${url}/api/v1/auth/login`) return true;
    const sent = (await r.request().allHeaders()).authorization;
    return revokedToken !== null && sent === `Bearer ${revokedToken}`;
  };
  page.on('console', (m) => {
    // Chromium logs every error answer; the response handler judges those.
    if (/^Failed to load resource: the server responded with a status of/.test(m.text())) return;
    if (m.type() === 'error' || m.type() === 'warning')
      problems.push(`console ${m.type()} on ${new URL(page.url()).pathname}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    // Long polls of logs are aborted when the page changes: expected.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  // Refusals a step provokes on purpose: `${method} ${url}` -> its status.
  const expectedRefusals = new Map();
  page.on('response', async (r) => {
    if (expectedRefusals.get(`${r.request().method()} ${r.url()}`) === r.status()) return;
    if (r.status() >= 400 && !(await expected401(r).catch(() => false)))
      problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  // axe-core on every page visited (WCAG 2.1 A and AA); the violations of
  // all pages are reported together at the end.
  const a11yProblems = [];
  const a11y = async (what, onPage = page) => {
    try {
      await checkA11y(onPage, what);
      log(`axe-core: no violations on ${what}`);
    } catch (e) {
      a11yProblems.push(e.message);
    }
  };
  const shot = async (name, opts = {}) => {
    await page.waitForTimeout(400); // let charts settle
    await page.screenshot({ path: path.join(artifacts, `${name}.png`), ...opts });
    log(`screenshot ${name}.png`);
  };

  // 0. Sign in: the first visit shows the sign-in page, asking the API
  // nothing; a wrong password says so; the right one (typed, Enter) lands on
  // the experiments page.
  const early = [];
  const countEarly = (r) => r.url().includes('/api/v1/') && early.push(r.url());
  page.on('request', countEarly);
  await page.goto(`${url}/`);
  const signInTitle = page.getByRole('heading', { level: 1, name: 'Sign in' });
  await signInTitle.waitFor({ timeout: 20000 });
  check(
    await page.evaluate(() => document.activeElement?.getAttribute('name') === 'username'),
    'the sign-in page starts in the username field',
  );
  check(early.length === 0, `the sign-in page asked the API nothing, but: ${early.join(', ')}`);
  page.off('request', countEarly);
  await shot('sign-in');
  await a11y('the sign-in page');
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(`not-${adminPassword}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const signInError = page.locator('.sign-in-error[role=alert]');
  await signInError.waitFor();
  check(
    /wrong username or password/i.test(await signInError.textContent()),
    `a wrong password says so: ${await signInError.textContent()}`,
  );
  check((await page.getByLabel('Password').inputValue()) === '', 'a wrong password is cleared');
  await shot('sign-in-error');
  await a11y('the sign-in page with an error');
  await page.getByLabel('Password').fill(adminPassword); // the cursor is there already
  await page.keyboard.press('Enter');

  // 1. Experiments: both experiments, with state, trials and the best metric.
  const gridRow = page.locator(`tr[data-experiment="${grid}"]`);
  await gridRow.waitFor({ timeout: 20000 });
  check(new URL(page.url()).pathname === '/', `signing in stays on the page asked for (${page.url()})`);
  const whoami = (await page.locator('header .whoami').textContent()).replace(/\s+/g, ' ').trim();
  check(whoami === 'Signed in as admin admin', `the header shows the user and role: "${whoami}"`);
  check((await gridRow.locator('a.strong').textContent()) === 'quadratic-grid', 'the grid row names quadratic-grid');
  check((await gridRow.locator('.badge').textContent()) === 'Completed', 'the grid shows Completed');
  check((await gridRow.locator('td').nth(7).textContent()) === '8', 'the grid shows 8 trials');
  check(
    /validation_loss/.test(await gridRow.locator('td').nth(6).textContent()),
    'the grid shows its best validation_loss',
  );
  const slowRow = page.locator(`tr[data-experiment="${slow}"]`);
  await slowRow.waitFor();
  check((await slowRow.locator('.badge').textContent()) === 'Active', 'the slow search shows Active');
  await shot('experiments');
  await a11y('the experiment list');

  // The label filter narrows the list, through the URL.
  await page.getByLabel('Label').selectOption('busy');
  await page.waitForURL(/label=busy/);
  await gridRow.waitFor({ state: 'detached' });
  check((await page.locator('tbody tr').count()) === 1, 'the label filter leaves one experiment');
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await gridRow.waitFor();

  // No request storm: one list request per poll while idle.
  const apiRequests = [];
  const countRequests = (r) => r.url().includes('/api/v1/') && apiRequests.push(r.url());
  page.on('request', countRequests);
  await page.waitForTimeout(9000);
  page.off('request', countRequests);
  log(`${apiRequests.length} API requests in 9 s on the experiments page`);
  check(
    apiRequests.length <= 5,
    `at most 5 API requests in 9 s while idle, got ${apiRequests.length}: ${apiRequests.join(', ')}`,
  );

  // 2. Experiment: one curve per trial, the trials table, the hyperparameter views.
  await gridRow.locator('a.strong').click();
  await page.waitForURL(`${url}/experiments/${grid}`);
  const validation = page.locator('figure.chart[aria-label^="validation validation_loss"]');
  const training = page.locator('figure.chart[aria-label^="training loss"]');
  await validation.waitFor({ timeout: 20000 });
  await training.waitFor({ timeout: 20000 });
  await page.waitForFunction(() => document.querySelectorAll('figure.chart canvas').length === 2);
  for (const [name, chart] of [
    ['validation', validation],
    ['training', training],
  ]) {
    const lines = Number(await chart.getAttribute('data-series'));
    check(lines === 8, `the ${name} chart has ${lines} lines, want one per trial (8)`);
    const legend = await chart.locator('.u-legend .u-series').count();
    check(legend === 9, `the ${name} chart legend has ${legend} rows, want the x axis and 8 trials`);
    check(Number(await chart.getAttribute('data-points')) > 1, `the ${name} curves have points`);
  }
  check(
    (await page.locator('section[aria-labelledby="trials-title"] tbody tr').count()) === 8,
    'the trials table has 8 rows',
  );
  check((await page.locator('svg.pcoords polyline').count()) === 8, 'the parallel coordinates have 8 lines');
  check(
    (await page.locator(`svg.pcoords polyline[data-trial="${bestTrial}"]`).getAttribute('class')).includes('pc-best'),
    'the best trial is highlighted',
  );
  check((await page.locator('svg.scatter a.scatter-point').count()) === 8, 'the scatter has 8 points');
  // The heat map: 4 learning rates by 2 batch sizes, a trial in each cell.
  const heat = page.getByRole('region', { name: 'Heat map table' });
  await heat.waitFor();
  check((await heat.locator('td.heat-cell').count()) === 8, 'the heat map has 8 cells with a trial');
  check((await heat.locator('td.heat-empty').count()) === 0, 'no cell of the grid is empty');
  check(
    (await heat.locator('thead th').allTextContents()).length === 5 && (await heat.locator('tbody tr').count()) === 2,
    'the heat map has a column per learning rate and a row per batch size',
  );
  await page.locator('section[aria-labelledby="model-title"] tr[data-file="run.sh"]').waitFor({ timeout: 20000 });
  await shot('experiment', { fullPage: true });
  await a11y('the experiment page');

  // 3. Trial (the best one): hyperparameters, curves, logs with search.
  await page.locator(`tr[data-trial="${bestTrial}"] a`).first().click();
  await page.waitForURL(`${url}/trials/${bestTrial}`);
  const logBox = page.getByRole('log');
  await page.waitForFunction(
    () => /validation_loss/.test(document.querySelector('[role=log]')?.textContent ?? ''),
    null,
    { timeout: 20000 },
  );
  check(/quadratic: trial \d+/.test(await logBox.textContent()), 'the logs show the trial starting');
  check((await page.locator('figure.chart').count()) === 2, 'the trial page has a validation and a training chart');
  await page.getByLabel('Search').fill('validation_loss');
  await page.waitForFunction(() => document.querySelectorAll('[role=log] mark').length > 0);
  const shownLines = await page.locator('[role=log] .log-line').count();
  const matching = await page.locator('[role=log] .log-line', { hasText: 'validation_loss' }).count();
  check(
    shownLines > 0 && shownLines === matching,
    `searching shows only matching lines (${matching} of ${shownLines})`,
  );
  await page.getByLabel('Search').fill('');
  check(
    (await page.locator('section[aria-labelledby="ckpt-title"] tbody tr').count()) >= 1,
    'the trial has checkpoints listed',
  );
  check(
    (await page.locator('section[aria-labelledby="attempts-title"] tbody tr').count()) >= 1,
    'the trial has an attempt listed',
  );
  await shot('trial', { fullPage: true });
  await a11y('the trial page');

  // 4. Cluster: pools, 2 agents x 2 slots held by the slow search, waiting jobs.
  await page.getByRole('link', { name: 'Cluster' }).click();
  await page.waitForURL(`${url}/cluster`);
  await page.locator('.slot-grid').nth(1).waitFor({ timeout: 20000 });
  check((await page.locator('.slot-grid').count()) === 2, 'two agents have slot grids');
  check((await page.locator('.slot-grid .slot').count()) === 4, 'four slots are drawn');
  await page.waitForFunction(() => document.querySelectorAll('.slot-grid a.slot-used').length === 4);
  const reasons = page.locator('section[aria-labelledby="queue-title"] tbody tr td.reason');
  await page.waitForFunction(
    () => document.querySelectorAll('section[aria-labelledby="queue-title"] tbody tr').length === 6,
  );
  const pendingReasons = (await reasons.allTextContents()).filter((r) => r !== 'running');
  check(
    pendingReasons.length === 2 && pendingReasons.every((r) => r.length > 10),
    `two jobs wait, each with a reason: ${pendingReasons.join(' | ')}`,
  );
  log(`a waiting job's reason: ${pendingReasons[0]}`);
  // The reasons are the master's sentences (why_waiting), the ones `ring job list` shows.
  const apiReasons = (await getJson(`${url}/api/v1/jobs`)).jobs.map((j) => j.why_waiting).filter((r) => r !== null);
  check(
    JSON.stringify([...apiReasons].sort()) === JSON.stringify([...pendingReasons].sort()),
    `the page shows the API's why_waiting: ${apiReasons.join(' | ')}`,
  );
  const jobList = await runRing(url, ['job', 'list']);
  check(
    pendingReasons.every((r) => jobList.includes(r.slice(0, 30))),
    `ring job list gives the same reasons:\n${jobList}`,
  );
  check((await page.locator('[data-pool="default"]').count()) === 1, 'the default pool is shown');
  check(
    (await page.locator('[data-agent]').filter({ hasText: 'single-user' }).count()) === 2,
    'each agent says it runs in single-user mode',
  );
  await shot('cluster', { fullPage: true });
  await a11y('the cluster page');

  // 5. Kill one trial of the slow search from its trials table: it ends
  // CANCELED and the search goes on. Then kill the slow search from the
  // experiment page, with the confirmation.
  await page.goto(`${url}/experiments/${slow}`);
  const victim = (await getJson(`${url}/api/v1/experiments/${slow}/trials`)).trials.find((t) => t.state === 'ACTIVE');
  check(victim, 'the slow search has an active trial');
  await page.getByRole('button', { name: `Kill trial ${victim.id}`, exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Kill trial' }).click();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  await waitFor(
    `trial ${victim.id} to end CANCELED`,
    async () => (await getJson(`${url}/api/v1/trials/${victim.id}`)).state === 'CANCELED',
    30000,
  );
  check((await getJson(`${url}/api/v1/experiments/${slow}`)).state === 'ACTIVE', 'the search goes on without it');
  await page.locator(`tr[data-trial="${victim.id}"] .badge`, { hasText: 'Canceled' }).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: `Kill experiment ${slow}` }).click();
  const dialog = page.getByRole('dialog');
  check(
    (await dialog.getByRole('heading').textContent()) === `Kill experiment ${slow} (slow-random)?`,
    'the kill dialog names the experiment',
  );
  check(await page.evaluate(() => document.activeElement?.textContent === 'Cancel'), 'the dialog focuses Cancel first');
  await a11y('the kill dialog');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: `Kill experiment ${slow}` }).click();
  await dialog.getByRole('button', { name: 'Kill' }).click();
  await dialog.waitFor({ state: 'detached' });
  await waitFor(
    'the slow search to end CANCELED',
    async () => (await getJson(`${url}/api/v1/experiments/${slow}`)).state === 'CANCELED',
    60000,
  );
  await page.waitForFunction(() => document.querySelector('h1 + .head-line .badge')?.textContent === 'Canceled', null, {
    timeout: 20000,
  });

  // 6. Keyboard: the first Tab reaches the skip link, which moves to the content.
  await page.goto(`${url}/experiments`);
  await gridRow.waitFor();
  await page.keyboard.press('Tab');
  check(
    await page.evaluate(() => document.activeElement?.textContent === 'Skip to content'),
    'the first Tab focuses the skip link',
  );

  // 7. A narrow window: no sideways scrolling of the page itself.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(500);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `the page scrolls sideways by ${overflow}px at 390px wide`);
  await shot('experiments-narrow');
  await page.goto(`${url}/experiments/${grid}`);
  await page.locator('figure.chart canvas').first().waitFor();
  const overflow2 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow2 <= 1, `the experiment page scrolls sideways by ${overflow2}px at 390px wide`);
  await shot('experiment-narrow');

  // 8. A page that does not exist is the app's own page, not an error.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${url}/nowhere/at/all`);
  await page.getByRole('heading', { name: 'Page not found' }).waitFor();
  await a11y('the page-not-found page');

  // 9. Sign out: back to the sign-in page, and the master forgot the token.
  await page.goto(`${url}/cluster`);
  await page.locator('.slot-grid').first().waitFor({ timeout: 20000 });
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('ring.session') ?? 'null'));
  check(stored?.username === 'admin' && stored?.role === 'admin', `the session is stored: ${JSON.stringify(stored)}`);
  revokedToken = stored.token;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await signInTitle.waitFor();
  check((await page.evaluate(() => localStorage.getItem('ring.session'))) === null, 'signing out forgets the session');
  await waitFor(
    'the signed-out token to stop working',
    async () =>
      (await fetch(`${url}/api/v1/agents`, { headers: { Authorization: `Bearer ${revokedToken}` } })).status === 401,
    5000,
  );
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  const overflow3 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow3 <= 1, `the sign-in page scrolls sideways by ${overflow3}px at 390px wide`);
  await shot('sign-in-narrow');
  await page.setViewportSize({ width: 1280, height: 800 });

  // 10. A token the master no longer takes (here: the signed-out one) sends
  // the browser to the sign-in page, which says why; signing in returns to
  // the page the user was on.
  await page.evaluate((s) => localStorage.setItem('ring.session', JSON.stringify(s)), stored);
  await page.reload();
  await page.getByText('You were signed out:').waitFor({ timeout: 20000 });
  check(new URL(page.url()).pathname === '/cluster', `the URL stays on the page: ${page.url()}`);
  check((await page.getByLabel('Username').inputValue()) === 'admin', 'the sign-in page fills in who was signed in');
  await page.getByLabel('Password').fill(adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.slot-grid').first().waitFor({ timeout: 20000 });
  check(new URL(page.url()).pathname === '/cluster', 'signing in again returns to the cluster page');

  // 11. Users (admins): an admin creates carol, links her to a Unix account
  // (root is refused before anything is sent), deactivates her; the master
  // has each change.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await page.waitForURL(`${url}/users`);
  await page.locator('tr[data-user="admin"]').waitFor({ timeout: 20000 });
  const newUser = page.getByRole('form', { name: 'Create a user' });
  await newUser.getByLabel('Username').fill('carol');
  await newUser.getByLabel('Password').fill(crypto.randomBytes(12).toString('base64url'));
  await newUser.getByRole('button', { name: 'Create user' }).click();
  await page.getByText('Created carol (user).').waitFor({ timeout: 20000 });
  const carolRow = page.locator('tr[data-user="carol"]');
  await carolRow.waitFor({ timeout: 20000 });
  await carolRow.getByRole('button', { name: 'Link Unix account of carol' }).click();
  const linkForm = page.getByRole('form', { name: 'Unix account of carol' });
  await linkForm.getByLabel('UID').fill('0');
  await linkForm.getByLabel('GID').fill('4100');
  await linkForm.getByRole('button', { name: 'Link' }).click();
  await linkForm.getByRole('alert').waitFor();
  check(/never run as root/.test(await linkForm.getByRole('alert').textContent()), 'linking to root is refused');
  await linkForm.getByLabel('UID').fill('4100');
  await linkForm.getByLabel('Account name (optional)').fill('carol');
  await linkForm.getByRole('button', { name: 'Link' }).click();
  await carolRow.getByText('carol 4100:4100').waitFor({ timeout: 20000 });
  let carol = (await getJson(`${url}/api/v1/users`)).users.find((u) => u.username === 'carol');
  check(
    carol?.unix?.uid === 4100 && carol.unix.gid === 4100 && carol.unix.user === 'carol',
    `the master has carol's link: ${JSON.stringify(carol)}`,
  );
  await carolRow.getByRole('button', { name: 'Deactivate carol' }).click();
  await carolRow.getByText('deactivated').waitFor({ timeout: 20000 });
  carol = (await getJson(`${url}/api/v1/users`)).users.find((u) => u.username === 'carol');
  check(carol?.active === false, `the master has carol deactivated: ${JSON.stringify(carol)}`);
  await shot('users', { fullPage: true });
  await a11y('the users page');

  // 12. A user who is not an admin gets no actions on someone else's
  // experiment (and the master refuses them with a 403 anyway).
  const bobPassword = crypto.randomBytes(12).toString('base64url');
  const created = await fetch(`${url}/api/v1/users`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'bob', password: bobPassword, role: 'user' }),
  });
  check(created.status === 201, `creating user bob answered ${created.status}`);
  const bobToken = await cluster.login('bob', bobPassword);
  const refused = await fetch(`${url}/api/v1/experiments/${grid}/archive`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${bobToken}` },
  });
  check(refused.status === 403, `bob archiving admin's experiment answered ${refused.status}, want 403`);
  const bobPage = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  bobPage.on('pageerror', (e) => problems.push(`page error (bob): ${e.message}`));
  cluster.recordAnswers(bobPage);
  await bobPage.goto(`${url}/experiments/${grid}`);
  await bobPage.getByLabel('Username').fill('bob');
  await bobPage.getByLabel('Password').fill(bobPassword);
  await bobPage.keyboard.press('Enter');
  await bobPage
    .getByText('This is admin’s experiment: only they or an admin can archive it.')
    .waitFor({ timeout: 20000 });
  check(
    (await bobPage.getByRole('button', { name: `Archive experiment ${grid}` }).count()) === 0,
    "bob gets no Archive button on admin's experiment",
  );
  await bobPage.goto(`${url}/experiments`);
  await bobPage.locator(`tr[data-experiment="${grid}"]`).waitFor({ timeout: 20000 });
  check(
    (await bobPage.locator(`tr[data-experiment="${grid}"] button`).count()) === 0,
    "the list offers bob no actions on admin's experiments",
  );
  check(
    (await bobPage.locator('header .whoami').textContent()).replace(/\s+/g, ' ').trim() === 'Signed in as bob user',
    'the header shows bob and his role',
  );
  check(
    (await bobPage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).count()) === 0,
    'the Users page is not in the navigation of a user who is not an admin',
  );
  await a11y('the list as bob sees it', bobPage);
  const bobUsers = await fetch(`${url}/api/v1/users`, { headers: { Authorization: `Bearer ${bobToken}` } });
  check(bobUsers.status === 403, `bob listing users answered ${bobUsers.status}, want 403`);

  // 13. Edit the grid's name and labels on its page; the master has them.
  await page.goto(`${url}/experiments/${grid}`);
  await page.getByRole('button', { name: `Edit experiment ${grid}` }).click();
  const editForm = page.getByRole('form', { name: `Edit experiment ${grid}` });
  await editForm.getByLabel('Name').fill('quadratic-grid-baseline');
  await editForm.getByLabel('Labels').fill('baseline, lr-sweep');
  await a11y('the experiment edit form');
  await editForm.getByRole('button', { name: 'Save' }).click();
  await editForm.waitFor({ state: 'detached' });
  await page.getByRole('heading', { level: 1, name: /quadratic-grid-baseline/ }).waitFor();
  const edited = await getJson(`${url}/api/v1/experiments/${grid}`);
  check(
    edited.name === 'quadratic-grid-baseline' && JSON.stringify(edited.labels) === '["baseline","lr-sweep"]',
    `the master has the new name and labels: ${edited.name} ${JSON.stringify(edited.labels)}`,
  );

  // 14. The list filters by the new label, and shows the labels.
  await page.goto(`${url}/experiments`);
  await gridRow.waitFor({ timeout: 20000 });
  await page.getByLabel('Label').selectOption('lr-sweep');
  await page.waitForURL(/label=lr-sweep/);
  await slowRow.waitFor({ state: 'detached' });
  check((await page.locator('tbody tr').count()) === 1, 'the label filter leaves the grid alone');
  check(
    (await gridRow.locator('.chip').allTextContents()).join(',') === 'baseline,lr-sweep',
    'the grid row shows its labels',
  );
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await slowRow.waitFor();

  // 15. Fork the grid from the editor: a misspelt key is marked at its line
  // by the master's check; with one hyperparameter changed instead
  // (batch_size 32 only), the fork is created and runs to the end.
  await page.goto(`${url}/experiments/${grid}`);
  await page.getByRole('link', { name: `Fork experiment ${grid}` }).click();
  await page.waitForURL(`${url}/experiments/${grid}/fork`);
  const editor = page.locator('.cm-content');
  await editor.waitFor({ timeout: 20000 });
  const parentConfig = edited.config;
  const badLine = parentConfig.split('\n').findIndex((l) => l.includes('max_concurrent_trials')) + 1;
  check(badLine > 0, 'the grid config has max_concurrent_trials');
  // Replaces the editor's text as a user would: select all, paste.
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  const setEditor = async (text) => {
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.evaluate((t) => navigator.clipboard.writeText(t), text);
    await page.keyboard.press('Control+V');
    await waitFor(
      'the editor to hold the new text',
      () => page.evaluate((want) => document.querySelector('.cm-content').innerText.trim() === want.trim(), text),
      5000,
    );
  };
  await setEditor(parentConfig.replace('max_concurrent_trials', 'max_concurent_trials'));
  await page.getByRole('button', { name: 'Check', exact: true }).click();
  const issue = page.locator(`.issue-error[data-line="${badLine}"]`);
  await issue.waitFor({ timeout: 20000 });
  check(
    /max_concurent_trials/.test(await issue.textContent()),
    `the problem names the key: ${await issue.textContent()}`,
  );
  await page.waitForFunction(
    (n) => document.querySelectorAll('.cm-content .cm-line')[n - 1]?.querySelector('.cm-lintRange-error') != null,
    badLine,
    { timeout: 5000 },
  );
  check(
    (await page.locator('.cm-content .cm-lintRange-error').count()) === 1,
    'exactly one place is marked as an error',
  );
  await shot('fork-error', { fullPage: true });
  await a11y('the fork editor with a marked error');
  const forkConfig = parentConfig.replace('vals: [16, 64]', 'vals: [32]');
  check(forkConfig !== parentConfig, 'the grid config has batch_size vals [16, 64]');
  await setEditor(forkConfig);
  await page.getByRole('button', { name: 'Check', exact: true }).click();
  await page.getByText('The master found no problem in this config.').waitFor({ timeout: 20000 });
  check((await page.locator('.cm-content .cm-lintRange-error').count()) === 0, 'a clean check leaves no marks');
  await page.getByRole('button', { name: 'Create fork' }).click();
  await page.waitForURL(/\/experiments\/\d+$/, { timeout: 20000 });
  const fork = Number(new URL(page.url()).pathname.split('/').pop());
  check(fork !== grid, `the fork is a new experiment (${fork})`);
  await page.getByRole('link', { name: `experiment ${grid}`, exact: true }).waitFor({ timeout: 20000 });
  const forkInfo = await getJson(`${url}/api/v1/experiments/${fork}`);
  check(
    forkInfo.forked_from === grid && forkInfo.config.trim() === forkConfig.trim(),
    `the fork records its parent and runs the edited config: ${JSON.stringify(forkInfo.forked_from)}`,
  );
  log(`fork of ${grid} is experiment ${fork}; waiting for it to complete`);
  await runRing(url, ['experiment', 'wait', String(fork)]);
  const forkTrials = (await getJson(`${url}/api/v1/experiments/${fork}/trials`)).trials;
  check(
    forkTrials.length === 4 && forkTrials.every((t) => t.hparams.batch_size === 32 && t.state === 'COMPLETED'),
    `the fork ran 4 trials, all with batch_size 32: ${JSON.stringify(forkTrials.map((t) => [t.state, t.hparams]))}`,
  );
  await page.waitForFunction(
    () => document.querySelector('h1 + .head-line .badge')?.textContent === 'Completed',
    null,
    {
      timeout: 20000,
    },
  );
  await shot('fork', { fullPage: true });

  // 15b. Compare the grid and its fork: selected in the list, Compare opens
  // the page with their 12 trials (the URL names them), one line and legend
  // entry per trial labelled with its experiment, and a table row each. A
  // trial removed, an unknown id refused, the trial added back by id.
  await page.goto(`${url}/experiments`);
  await gridRow.waitFor({ timeout: 20000 });
  await page.getByRole('checkbox', { name: `Select experiment ${grid}`, exact: true }).check();
  await page.getByRole('checkbox', { name: `Select experiment ${fork}`, exact: true }).check();
  await page
    .getByRole('toolbar', { name: 'Act on the selected experiments' })
    .getByRole('link', { name: 'Compare' })
    .click();
  await page.waitForURL(/\/compare\?trials=[\d,]+$/, { timeout: 20000 });
  const comparedIds = new URL(page.url()).searchParams.get('trials').split(',').map(Number);
  const wantIds = [...gridTrials, ...forkTrials].map((t) => t.id);
  check(
    comparedIds.length === 12 && wantIds.every((id) => comparedIds.includes(id)),
    `the Compare URL names the 12 trials of both: ${comparedIds.join(',')}`,
  );
  const compareChart = page.locator(
    'figure.chart[aria-label="validation validation_loss of the compared trials by batches"]',
  );
  await compareChart.waitFor({ timeout: 20000 });
  const compareTable = page.getByRole('region', { name: 'Compared trials' });
  const chartSeries = async () => Number(await compareChart.getAttribute('data-series'));
  await waitFor('a line per compared trial', async () => (await chartSeries()) === 12, 20000);
  const legendRows = await compareChart.locator('.u-legend .u-series').allTextContents();
  check(legendRows.length === 13, `the legend has the x axis and 12 trials: ${legendRows.length}`);
  for (const [exp, t] of [
    [grid, gridTrials[0]],
    [fork, forkTrials[0]],
  ])
    check(
      legendRows.some((r) => r.includes(`exp ${exp} · trial ${t.id}`)),
      `the legend names exp ${exp} · trial ${t.id}: ${legendRows.slice(0, 3).join(' | ')}`,
    );
  await waitFor(
    'a table row per compared trial',
    async () => (await compareTable.locator('tbody tr').count()) === 12,
    20000,
  );
  check(
    (await compareTable.locator(`tr[data-experiment="${grid}"]`).count()) === 8 &&
      (await compareTable.locator(`tr[data-experiment="${fork}"]`).count()) === 4,
    'the table has the 8 trials of the grid and the 4 of the fork',
  );
  const compareHeaders = (await compareTable.locator('thead th').allTextContents()).join(' ');
  check(
    /learning_rate/.test(compareHeaders) && /batch_size/.test(compareHeaders),
    `the table has the hyperparameters as columns: ${compareHeaders}`,
  );
  await shot('compare', { fullPage: true });
  await a11y('the compare page');
  const removed = forkTrials[0].id;
  await compareTable.getByRole('button', { name: `Remove trial ${removed} from the comparison` }).click();
  await waitFor('the removed trial to leave the chart', async () => (await chartSeries()) === 11, 20000);
  check(!new URL(page.url()).searchParams.get('trials').split(',').includes(String(removed)), 'the URL drops it');
  const addTrials = page.getByRole('form', { name: 'Add trials' });
  expectedRefusals.set(`GET ${url}/api/v1/trials/99999`, 404);
  await addTrials.getByLabel('Trial ids').fill('99999');
  await addTrials.getByRole('button', { name: 'Add' }).click();
  await page.getByText('Trial 99999 does not exist or is not visible to you.').waitFor({ timeout: 20000 });
  await addTrials.getByLabel('Trial ids').fill(String(removed));
  await page.keyboard.press('Enter');
  await waitFor('the trial added back', async () => (await chartSeries()) === 12, 20000);
  check(new URL(page.url()).searchParams.get('trials').endsWith(`,${removed}`), 'the URL has it again, last');
  await a11y('the compare page after adding a trial');

  // 16. Bulk-archive the grid and the slow search from the list.
  await page.goto(`${url}/experiments`);
  await gridRow.waitFor({ timeout: 20000 });
  await page.getByRole('checkbox', { name: `Select experiment ${grid}`, exact: true }).check();
  await page.getByRole('checkbox', { name: `Select experiment ${slow}`, exact: true }).check();
  const bulkBar = page.getByRole('toolbar', { name: 'Act on the selected experiments' });
  check(/2 selected/.test(await bulkBar.textContent()), 'the toolbar counts two selected rows');
  await a11y('the experiment list with rows selected');
  await bulkBar.getByRole('button', { name: 'Archive', exact: true }).click();
  const bulkDialog = page.getByRole('dialog');
  check(
    /^Archive 2 experiments/.test(await bulkDialog.getByRole('heading').textContent()),
    'the dialog names how many experiments it archives',
  );
  await a11y('the bulk archive dialog');
  await bulkDialog.getByRole('button', { name: 'Archive', exact: true }).click();
  await page.getByText('Archive: done for 2 experiments.').waitFor({ timeout: 20000 });
  await gridRow.waitFor({ state: 'detached' });
  await slowRow.waitFor({ state: 'detached' });
  for (const id of [grid, slow])
    check((await getJson(`${url}/api/v1/experiments/${id}`)).archived === true, `experiment ${id} is archived`);
  check((await page.locator(`tr[data-experiment="${fork}"]`).count()) === 1, 'the fork is still listed');
  await page.getByLabel('Archived').selectOption('only');
  await page.waitForURL(/archived=only/);
  await gridRow.waitFor({ timeout: 20000 });
  await slowRow.waitFor();
  check((await page.locator('tbody tr').count()) === 2, 'only the two archived experiments are listed');

  // 17. Delete the fork from its page: after the confirmation the list no
  // longer has it, and the master answers 404 for it.
  await page.goto(`${url}/experiments/${fork}`);
  await page.getByRole('button', { name: `Delete experiment ${fork}` }).click();
  await a11y('the delete dialog');
  await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
  await page.waitForURL(`${url}/experiments`);
  // (The other two are archived: nothing is left to list.)
  await page.getByText('No experiments yet.').waitFor({ timeout: 20000 });
  check((await page.locator(`tr[data-experiment="${fork}"]`).count()) === 0, 'the deleted fork is not listed');
  await waitFor(
    `experiment ${fork} to be gone`,
    async () => (await cluster.api('GET', `/api/v1/experiments/${fork}`)).status === 404,
    20000,
  );

  // 18. Continue the grid's best trial from its page's dialog, as a new
  // experiment: a length its checkpoint has reached is refused with the
  // master's reason; a longer one creates the experiment, which names the
  // trial and experiment it continues, and the trial links to it.
  const gridBest = (await getJson(`${url}/api/v1/trials/${bestTrial}`)).total_batches;
  await page.goto(`${url}/trials/${bestTrial}`);
  await page.getByRole('button', { name: `Continue trial ${bestTrial}` }).click();
  const continueDialog = page.getByRole('dialog', { name: `Continue trial ${bestTrial}` });
  const lengthField = continueDialog.getByLabel('New total length (batches)');
  await lengthField.waitFor();
  check(
    await page.evaluate(() => document.activeElement?.getAttribute('type') === 'number'),
    'the continue dialog starts in the length field',
  );
  check((await continueDialog.getByRole('radio').count()) === 0, 'a grid search cannot be continued in place');
  await a11y('the continue dialog');
  expectedRefusals.set(`POST ${url}/api/v1/trials/${bestTrial}/continue`, 400);
  await lengthField.fill(String(gridBest));
  await continueDialog.getByRole('button', { name: 'Continue', exact: true }).click();
  const continueError = continueDialog.getByRole('alert');
  await continueError.waitFor({ timeout: 20000 });
  check(
    /is not beyond trial \d+'s latest checkpoint/.test(await continueError.textContent()),
    `the dialog shows the master's refusal: ${await continueError.textContent()}`,
  );
  await lengthField.fill(String(gridBest + 100));
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/experiments\/\d+$/, { timeout: 20000 });
  const continued = Number(new URL(page.url()).pathname.split('/').pop());
  check(continued !== grid, `continuing made a new experiment (${continued})`);
  const warmStart = page.locator('dt', { hasText: 'Warm start' }).locator('xpath=following-sibling::dd');
  await warmStart.waitFor({ timeout: 20000 });
  check(
    new RegExp(`^Continues trial ${bestTrial} of experiment ${grid} \\(checkpoint \\w+ at [\\d,]+ batches\\)$`).test(
      (await warmStart.textContent()).trim(),
    ),
    `the new experiment names what it continues: ${await warmStart.textContent()}`,
  );
  await a11y('a continued experiment');
  log(`trial ${bestTrial} continues in experiment ${continued}; waiting for it to complete`);
  await runRing(url, ['experiment', 'wait', String(continued)]);
  await warmStart.getByRole('link', { name: `trial ${bestTrial}` }).click();
  await page.waitForURL(`${url}/trials/${bestTrial}`);
  const continuedLink = page.getByRole('link', { name: `Continued in experiment ${continued}` });
  await continuedLink.waitFor({ timeout: 20000 });
  await continuedLink.click();
  await page.waitForURL(`${url}/experiments/${continued}`);

  // 19. Retention of the ended continued experiment: keep 3 latest
  // checkpoints per trial; the master has it in the stored config.
  await page.waitForFunction(
    () => document.querySelector('h1 + .head-line .badge')?.textContent === 'Completed',
    null,
    {
      timeout: 20000,
    },
  );
  await page.getByRole('button', { name: `Edit retention of experiment ${continued}` }).click();
  const retentionForm = page.getByRole('form', { name: `Retention of experiment ${continued}` });
  const latestField = retentionForm.getByLabel('Latest of each trial');
  check(
    (await latestField.inputValue()) === '1',
    `the form starts from the default: ${await latestField.inputValue()}`,
  );
  await a11y('the retention form');
  await latestField.fill('3');
  await retentionForm.getByRole('button', { name: 'Save' }).click();
  await retentionForm.waitFor({ state: 'detached' });
  await page.getByText('best 0 of the experiment, best 1 and latest 3 of each trial', { exact: false }).waitFor();
  const retained = await getJson(`${url}/api/v1/experiments/${continued}`);
  check(/save_trial_latest: 3/.test(retained.config), `the master's config keeps 3 latest: ${retained.config}`);

  // 19b. Continue that experiment's trial in place (an ended single search
  // of admin's may): the page stays, and the experiment trains it on to the
  // new length.
  const [continuedTrial] = (await getJson(`${url}/api/v1/experiments/${continued}/trials`)).trials;
  await page.goto(`${url}/trials/${continuedTrial.id}`);
  await page.getByRole('button', { name: `Continue trial ${continuedTrial.id}` }).click();
  const inPlaceDialog = page.getByRole('dialog', { name: `Continue trial ${continuedTrial.id}` });
  await inPlaceDialog.getByRole('radio', { name: /In place/ }).check();
  await a11y('the continue dialog offering in place');
  await inPlaceDialog.getByLabel('New total length (batches)').fill(String(gridBest + 200));
  await inPlaceDialog.getByRole('button', { name: 'Continue', exact: true }).click();
  await inPlaceDialog.waitFor({ state: 'detached', timeout: 20000 });
  check(page.url() === `${url}/trials/${continuedTrial.id}`, `continuing in place stays on the page: ${page.url()}`);
  await runRing(url, ['experiment', 'wait', String(continued)]);
  const trainedOn = await getJson(`${url}/api/v1/trials/${continuedTrial.id}`);
  check(
    trainedOn.state === 'COMPLETED' && trainedOn.total_batches >= gridBest + 200,
    `the trial trained on in place to ${trainedOn.total_batches} batches (${trainedOn.state})`,
  );

  // 20. Register the grid's best checkpoint from its experiment page as the
  // first version of a new model: the page goes to the model, which shows
  // the version with where it came from; the Models page lists the model
  // and finds it by name.
  await page.goto(`${url}/experiments/${grid}`);
  const bestRow = page.locator('section[aria-labelledby="checkpoints-title"] tr.row-best');
  await bestRow.waitFor({ timeout: 20000 });
  const bestUuid = await bestRow.getAttribute('data-checkpoint');
  const gridCheckpoints = (await getJson(`${url}/api/v1/experiments/${grid}/checkpoints`)).checkpoints.filter(
    (c) => c.state === 'ACTIVE' && c.validation_metric !== null,
  );
  const lowest = Math.min(...gridCheckpoints.map((c) => c.validation_metric));
  check(
    gridCheckpoints.find((c) => c.uuid === bestUuid)?.validation_metric === lowest,
    `the marked checkpoint ${bestUuid} has the lowest validation_loss (${lowest})`,
  );
  await bestRow.getByRole('button', { name: `Register checkpoint ${bestUuid} as a model version` }).click();
  const registerDialog = page.getByRole('dialog');
  await registerDialog.getByLabel("New model's name").waitFor();
  await a11y('the register dialog');
  await registerDialog.getByLabel("New model's name").fill('quadratic-best');
  await registerDialog.getByLabel('Notes (optional)').fill('best of the grid');
  await registerDialog.getByRole('button', { name: 'Register', exact: true }).click();
  await page.waitForURL(`${url}/models/quadratic-best`, { timeout: 20000 });
  const versionRow = page.locator('tr[data-version="1"]');
  await versionRow.waitFor({ timeout: 20000 });
  const versionText = await versionRow.textContent();
  check(
    versionText.includes('best of the grid') && versionText.includes(`of experiment ${grid}`),
    `the version shows its notes and experiment: ${versionText}`,
  );
  check(
    (await versionRow.getByRole('button', { name: 'Download version 1 of quadratic-best' }).count()) === 1,
    "the version's checkpoint can be downloaded",
  );
  const registered = await getJson(`${url}/api/v1/models/quadratic-best/versions`);
  check(
    registered.versions.length === 1 && registered.versions[0].checkpoint_uuid === bestUuid,
    `the master has the version: ${JSON.stringify(registered.versions)}`,
  );
  await shot('model', { fullPage: true });
  await a11y('the model page');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
  await page.waitForURL(`${url}/models`);
  const modelRow = page.locator('tr[data-model="quadratic-best"]');
  await modelRow.waitFor({ timeout: 20000 });
  check((await modelRow.locator('td').nth(3).textContent()) === '1', 'the Models page counts its one version');
  const modelFilters = page.getByRole('search', { name: 'Filter models' });
  await modelFilters.getByLabel('Name').fill('no-such-model');
  await page.getByText('No model matches these filters.').waitFor({ timeout: 20000 });
  await modelFilters.getByLabel('Name').fill('best');
  await page.waitForURL(/name=best/);
  await modelRow.waitFor({ timeout: 20000 });
  await shot('models', { fullPage: true });
  await a11y('the models page');

  // 21. Webhooks: this master has no webhooks.allowed_urls, so it refuses
  // every URL; the form shows its reason, and the page lists none.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.waitForURL(`${url}/webhooks`);
  await page.getByText('No webhooks yet.').waitFor({ timeout: 20000 });
  expectedRefusals.set(`POST ${url}/api/v1/webhooks`, 400);
  const hookForm = page.getByRole('form', { name: 'Create a webhook' });
  await hookForm.getByLabel('Name').fill('done');
  await hookForm.getByLabel('URL').fill('https://hooks.example.com/ring');
  await hookForm.getByRole('checkbox', { name: 'Completed', exact: true }).check();
  await hookForm.getByRole('button', { name: 'Create webhook' }).click();
  const refusal = hookForm.getByRole('alert');
  await refusal.waitFor({ timeout: 20000 });
  const refusalText = await refusal.textContent();
  check(
    refusalText.includes("is not on master.yaml's webhooks.allowed_urls"),
    `the form shows the master's refusal: "${refusalText}"`,
  );
  check((await getJson(`${url}/api/v1/webhooks`)).total === 0, 'the master created no webhook');
  await shot('webhooks', { fullPage: true });
  await a11y('the webhooks page');

  // 21b. Templates: a template saved from the page's YAML editor is listed,
  // and the master has it as written.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates' }).click();
  await page.waitForURL(`${url}/templates`);
  await page.getByText('No templates yet.').waitFor({ timeout: 20000 });
  const templateForm = page.getByRole('form', { name: 'Save a template' });
  await templateForm.getByLabel('Name').fill('team-default');
  await editor.waitFor({ timeout: 20000 });
  const templateText = 'max_restarts: 7\nlabels: [team]\n';
  await setEditor(templateText);
  await templateForm.getByRole('button', { name: 'Save template' }).click();
  await templateForm.getByRole('status').waitFor({ timeout: 20000 });
  await page.locator('tr[data-template="team-default"]').waitFor({ timeout: 20000 });
  const storedTemplate = await getJson(`${url}/api/v1/templates/team-default`);
  check(storedTemplate.config === templateText, `the master has the template: ${JSON.stringify(storedTemplate)}`);
  check(storedTemplate.owner === 'admin', `the template is its creator's: ${storedTemplate.owner}`);
  await shot('templates', { fullPage: true });
  await a11y('the templates page');

  // 22. Workspaces: admin creates one (a taken name is refused at the
  // field first), a project in it, adds bob as a member and binds the
  // default pool; the bulk Move puts the continued experiment into the
  // project, and the list filtered by that project shows it alone.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workspaces' }).click();
  await page.waitForURL(`${url}/workspaces`);
  await page.locator('tr[data-workspace="1"]').waitFor({ timeout: 20000 });
  const wsForm = page.getByRole('form', { name: 'Create a workspace' });
  const wsName = wsForm.getByLabel('Name');
  expectedRefusals.set(`POST ${url}/api/v1/workspaces`, 409);
  await wsName.fill('Uncategorized');
  await wsForm.getByRole('button', { name: 'Create workspace' }).click();
  const wsRefusal = wsForm.getByRole('alert');
  await wsRefusal.waitFor({ timeout: 20000 });
  check(
    /exists already/.test(await wsRefusal.textContent()) && (await wsName.getAttribute('aria-invalid')) === 'true',
    `a taken name is refused at the name field: ${await wsRefusal.textContent()}`,
  );
  await a11y('the workspaces page with a refused name');
  await wsName.fill('research');
  await wsForm.getByLabel('Description').fill('experiments of the e2e test');
  await wsForm.getByRole('button', { name: 'Create workspace' }).click();
  await page.locator('tr[data-workspace]', { hasText: 'research' }).waitFor({ timeout: 20000 });
  await shot('workspaces', { fullPage: true });
  await a11y('the workspaces page');
  await wsForm.getByRole('status').getByRole('link', { name: 'research' }).click();
  await page.waitForURL(/\/workspaces\/\d+$/);
  const wsId = Number(new URL(page.url()).pathname.split('/').pop());
  const projectForm = page.getByRole('form', { name: 'Create a project' });
  await projectForm.getByLabel('Project name').fill('base');
  await projectForm.getByRole('button', { name: 'Create project' }).click();
  const projectsTable = page.getByRole('region', { name: 'Projects table' });
  // Renamed from its row's Edit dialog.
  await projectsTable.getByRole('button', { name: 'Edit project base' }).click({ timeout: 20000 });
  const editDialog = page.getByRole('dialog', { name: 'Edit project base' });
  await editDialog.getByLabel('Name').fill('baselines');
  await editDialog.getByLabel('Description').fill('first runs');
  await a11y('the project edit dialog');
  await editDialog.getByRole('button', { name: 'Save' }).click();
  await projectsTable.getByRole('link', { name: 'baselines' }).waitFor({ timeout: 20000 });
  check(
    (await projectsTable.locator('tr', { hasText: 'baselines' }).textContent()).includes('first runs'),
    'the renamed project shows its new description',
  );
  const memberForm = page.getByRole('form', { name: 'Add a member' });
  await memberForm.getByLabel('Username').fill('bob');
  await memberForm.getByLabel('Role').selectOption('MEMBER');
  await memberForm.getByRole('button', { name: 'Add member' }).click();
  await page.locator('tr[data-member="bob"]').waitFor({ timeout: 20000 });
  const poolForm = page.getByRole('form', { name: 'Bind a pool' });
  await poolForm.getByRole('combobox').selectOption('default');
  await poolForm.getByRole('checkbox', { name: /Default pool/ }).check();
  await poolForm.getByRole('button', { name: 'Bind pool' }).click();
  await page.locator('tr[data-pool-binding="default"]').waitFor({ timeout: 20000 });
  await shot('workspace', { fullPage: true });
  await a11y('the workspace page');
  const research = await getJson(`${url}/api/v1/workspaces/${wsId}`);
  check(
    research.members.some((m) => m.username === 'bob' && m.role === 'MEMBER') &&
      research.members.some((m) => m.username === 'admin' && m.role === 'ADMIN') &&
      research.pools.length === 1 &&
      research.pools[0].pool === 'default' &&
      research.pools[0].default === true,
    `the master has research's members and pool: ${JSON.stringify(research)}`,
  );
  const baselines = (await getJson(`${url}/api/v1/workspaces/${wsId}/projects`)).projects.find(
    (p) => p.name === 'baselines',
  );
  check(baselines, 'the master has the project baselines');

  await page.goto(`${url}/experiments?archived=true`);
  const continuedRow = page.locator(`tr[data-experiment="${continued}"]`);
  await continuedRow.waitFor({ timeout: 20000 });
  await gridRow.waitFor();
  await page.getByRole('checkbox', { name: `Select experiment ${continued}`, exact: true }).check();
  await page
    .getByRole('toolbar', { name: 'Act on the selected experiments' })
    .getByRole('button', { name: 'Move', exact: true })
    .click();
  const moveDialog = page.getByRole('dialog', { name: `Move experiment ${continued} to another project` });
  await moveDialog.getByLabel('Project').selectOption({ label: 'research / baselines' });
  await a11y('the move dialog');
  await moveDialog.getByRole('button', { name: 'Move', exact: true }).click();
  await page.getByText('Move to research / baselines: done for 1 experiment.').waitFor({ timeout: 20000 });
  const moved = await getJson(`${url}/api/v1/experiments/${continued}`);
  check(
    moved.project_id === baselines.id && moved.workspace_id === wsId,
    `the master has experiment ${continued} in research/baselines: ${moved.workspace}/${moved.project}`,
  );
  await continuedRow.getByRole('link', { name: 'research / baselines' }).waitFor({ timeout: 20000 });
  const filters = page.getByRole('search', { name: 'Filter experiments' });
  await filters.getByLabel('Workspace').selectOption({ label: 'research' });
  await page.waitForURL(new RegExp(`workspace_id=${wsId}`));
  await filters.getByLabel('Project').selectOption({ label: 'baselines' });
  await page.waitForURL(new RegExp(`workspace_id=${wsId}&project_id=${baselines.id}`));
  await gridRow.waitFor({ state: 'detached', timeout: 20000 });
  await continuedRow.waitFor();
  check((await page.locator('tbody tr').count()) === 1, 'the project filter leaves the moved experiment alone');
  await shot('experiments-by-project');
  await a11y('the experiment list filtered by project');
  await page.goto(`${url}/experiments/${continued}`);
  const placeLinks = page
    .locator('dt', { hasText: 'Project' })
    .locator('xpath=following-sibling::dd')
    .getByRole('link');
  await placeLinks.first().waitFor({ timeout: 20000 });
  check(
    JSON.stringify(await placeLinks.allTextContents()) === '["research","baselines"]',
    `the experiment page names its workspace and project: ${await placeLinks.allTextContents()}`,
  );

  check(a11yProblems.length === 0, a11yProblems.join('\n'));
  check(problems.length === 0, `the browser saw no errors, but:\n  ${problems.join('\n  ')}`);
  cluster.checkAnswers();
  log('all checks passed');
}

await cluster.run(main, 240000);
