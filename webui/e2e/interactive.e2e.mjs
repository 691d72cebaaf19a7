#!/usr/bin/env node
// End-to-end test of shells and notebooks in the web UI, in a real browser
// against a real master and agent.
//
// Starts ringmaster and one ringagent (2 CPU slots, single-user) from the
// build on 127.0.0.1 (free ports), creates the users alice and bob, and
// drives Debian's chromium (headless, through playwright-core) as alice:
// the Shells page starts a shell and opens its terminal (xterm.js over the
// master's WebSocket, with a one-time ticket); typing reaches the shell, a
// smaller window resizes the terminal (`stty size` says so), Ctrl-C stops a
// foreground `sleep 30` at once, closing and reopening the terminal shows the
// earlier screen (the agent replays its last 64 KiB), and Kill ends the
// shell. Bob gets no ticket for alice's shell (403) and her terminal's
// WebSocket refuses him without one. notebookCase() then does the same for a
// notebook (its Jupyter in a new tab on the task proxy's origin, a Python 3
// cell printing 42). Every API answer
// the browser got must be one docs/openapi.json describes, and the pages
// must pass axe-core's WCAG 2.1 AA rules; screenshots and,
// on a failure, the daemons' logs go to RING_ARTIFACTS_DIR. Every process it
// started is stopped.
//
// Environment: as webui/e2e/harness.mjs says.
import fs from 'node:fs';
import path from 'node:path';
import { Cluster, binDir, buildDir, check, checkA11y, chromiumPath, sleep, waitFor, webuiDir } from './harness.mjs';

const artifacts = process.env.RING_ARTIFACTS_DIR ?? path.join(buildDir, 'test-artifacts', 'interactive');
const cluster = new Cluster('interactive-e2e', artifacts);
const log = (...args) => cluster.log(...args);

// What the terminal shows now (its visible rows), with xterm's spaces plain.
async function screenText(page) {
  return (await page.locator('[data-testid="terminal"] .xterm-rows').innerText()).replace(/\u00a0/g, ' ');
}

async function waitForScreen(page, what, test, timeoutMs = 20000) {
  return waitFor(
    `the terminal to show ${what}`,
    async () => {
      const text = await screenText(page);
      return test(text) ? text : false;
    },
    timeoutMs,
  ).catch(async (e) => {
    await page.screenshot({ path: path.join(artifacts, 'terminal-failure.png') }).catch(() => {});
    const html = await page
      .locator('[data-testid="terminal"]')
      .innerHTML()
      .catch(() => '(no terminal)');
    throw new Error(
      `${e.message}\nthe terminal shows:\n${await screenText(page).catch(() => '(nothing)')}\n${html.slice(0, 3000)}`,
    );
  });
}

// The last "ROWS COLS" line `stty size` printed.
function lastSize(text) {
  const sizes = [...text.matchAll(/^\s*(\d+) (\d+)\s*$/gm)];
  return sizes.length ? `${sizes.at(-1)[1]} ${sizes.at(-1)[2]}` : null;
}

// Types a line into the terminal and presses Enter.
async function typeLine(page, line) {
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

// A browser page signed in as `user` on `route`, its problems (console
// errors, failed requests, error answers) collected in `problems`.
async function signedInPage(browser, user, route, problems, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  cluster.recordAnswers(page);
  page.on('console', (m) => {
    if (/^Failed to load resource: the server responded with a status of/.test(m.text())) return;
    if (m.type() === 'error' || m.type() === 'warning')
      problems.push(`console ${m.type()} (${user.name}): ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error (${user.name}): ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400 && r.url().startsWith(cluster.url)) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.goto(`${cluster.url}${route}`);
  await page.getByLabel('Username').fill(user.name);
  await page.getByLabel('Password').fill(user.password);
  await page.keyboard.press('Enter');
  await page.locator('header .whoami').waitFor({ timeout: 20000 });
  return { context, page };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`) });
  log(`screenshot ${name}.png`);
}

async function shellCase(browser, alice, bob, problems) {
  const { page } = await signedInPage(browser, alice, '/shells', problems);
  await page.getByRole('heading', { level: 1, name: 'Shells' }).waitFor({ timeout: 20000 });
  await page.getByText('No shells yet.').waitFor({ timeout: 20000 });
  await checkA11y(page, 'the shells page');

  // Start one (1 slot, the default pool) and wait until it runs.
  await page.getByLabel('Slots').fill('1');
  await page.getByRole('button', { name: 'Start shell' }).click();
  const started = await page.getByText(/^Started shell \d+\.$/).textContent();
  const id = Number(/\d+/.exec(started)[0]);
  log(`alice started shell ${id}`);
  const row = page.locator(`tr[data-task="${id}"]`);
  await page.locator(`tr[data-task="${id}"][data-state="RUNNING"]`).waitFor({ timeout: 30000 });
  check((await row.locator('td').nth(2).textContent()) === '1', 'the row shows 1 slot');
  check((await row.locator('td').nth(3).textContent()) === 'default', 'the row shows the default pool');

  // Open: the terminal shows the shell's prompt; typing reaches the shell.
  await page.getByRole('button', { name: `Open shell ${id}` }).click();
  await page.locator('[data-testid="terminal"] .xterm-rows').waitFor({ timeout: 20000 });
  // (A login shell may take a while to start on a loaded machine.)
  await waitForScreen(page, 'a prompt', (t) => /[$#>] *$/m.test(t.trimEnd()), 60000);
  await page.locator('[data-testid="terminal"]').click();
  await typeLine(page, 'echo ring-$((6*7))');
  await waitForScreen(page, 'ring-42', (t) => /^ring-42\s*$/m.test(t));
  await shot(page, 'shell-terminal');
  await checkA11y(page, 'the shells page with a terminal open');

  // A smaller window makes a smaller terminal, and the shell is told.
  await typeLine(page, 'stty size');
  const before = lastSize(await waitForScreen(page, 'its size', (t) => lastSize(t) !== null));
  const rowsBefore = await page.locator('[data-testid="terminal"] .xterm-rows > div').count();
  check(before === `${rowsBefore} ${before.split(' ')[1]}`, `stty says ${before}, the terminal has ${rowsBefore} rows`);
  await page.setViewportSize({ width: 900, height: 560 });
  await waitFor(
    'the terminal to fit the smaller window',
    async () => (await page.locator('[data-testid="terminal"] .xterm-rows > div').count()) < rowsBefore,
    10000,
  );
  await sleep(300);
  const rowsAfter = await page.locator('[data-testid="terminal"] .xterm-rows > div').count();
  await typeLine(page, 'stty size');
  const after = lastSize(
    await waitForScreen(page, 'a new size', (t) => lastSize(t) !== null && lastSize(t) !== before),
  );
  const [afterRows, afterCols] = after.split(' ').map(Number);
  check(afterRows === rowsAfter, `stty says ${after} after the resize, the terminal has ${rowsAfter} rows`);
  check(afterCols < Number(before.split(' ')[1]), `fewer columns after the resize: ${before} -> ${after}`);
  log(`terminal size ${before} -> ${after}`);

  // Ctrl-C stops the foreground job at once, not the shell.
  await typeLine(page, 'sleep 30; echo slept-$((3*3))');
  await sleep(700);
  const interrupted = Date.now();
  await page.keyboard.press('Control+C');
  await typeLine(page, 'echo back-$((2*21))');
  await waitForScreen(page, 'back-42', (t) => /^back-42\s*$/m.test(t), 10000);
  const took = Date.now() - interrupted;
  check(took < 5000, `the prompt came back ${took} ms after Ctrl-C`);
  check(!/^slept-9/m.test(await screenText(page)), 'the interrupted command did not go on');

  // Closing the terminal leaves the shell running; reopening shows its screen.
  await page.getByRole('button', { name: 'Close terminal' }).click();
  await page.locator('[data-testid="terminal"]').waitFor({ state: 'detached' });
  await sleep(500);
  const live = await cluster.api('GET', `/api/v1/shells/${id}`, undefined, alice.token);
  check(live.body.state === 'RUNNING', `the shell runs on after its terminal closed: ${JSON.stringify(live.body)}`);
  await page.getByRole('button', { name: `Open shell ${id}` }).click();
  await waitForScreen(page, 'the earlier screen again', (t) => /^ring-42\s*$/m.test(t) && /^back-42\s*$/m.test(t));
  await shot(page, 'shell-reopened');

  // Bob: no ticket for alice's shell, and her terminal refuses him.
  const refused = await cluster.api('POST', `/api/v1/shells/${id}/terminal/ticket`, undefined, bob.token);
  check(refused.status === 403, `bob's ticket for alice's shell answered ${refused.status}, want 403`);
  check(
    /belongs to alice/.test(refused.body?.error?.message ?? ''),
    `the refusal names the owner: ${JSON.stringify(refused.body)}`,
  );
  const terminal = `/api/v1/shells/${id}/terminal?rows=24&cols=80`;
  const none = await cluster.upgradeStatus(terminal);
  check(none === 401, `the terminal WebSocket without a ticket answered ${none}, want 401`);
  const asBob = await cluster.upgradeStatus(terminal, { Authorization: `Bearer ${bob.token}` });
  check(asBob === 403, `the terminal WebSocket with bob's token answered ${asBob}, want 403`);
  const forged = await cluster.upgradeStatus(`${terminal}&ticket=${'0'.repeat(64)}`);
  check(forged === 401, `the terminal WebSocket with a made-up ticket answered ${forged}, want 401`);

  // Kill from the page: the shell ends and its terminal closes.
  await row.getByRole('button', { name: `Kill shell ${id}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Kill shell' }).click();
  await page.locator(`tr[data-task="${id}"][data-state="TERMINATED"]`).waitFor({ timeout: 60000 });
  check((await page.locator('[data-testid="terminal"]').count()) === 0, 'the killed shell’s terminal is closed');
  const ended = await cluster.api('GET', `/api/v1/shells/${id}`, undefined, alice.token);
  check(ended.body.end_cause === 'USER_KILL', `the shell ended USER_KILL: ${JSON.stringify(ended.body)}`);
  await shot(page, 'shell-killed');
  return page;
}

// Notebooks: alice starts one from the Notebooks
// page and runs a cell in its Jupyter (Notebook 6.4, classic) on the proxy's
// origin; bob gets no link and no page; an admin's link opens it.
async function notebookCase(browser, alice, bob, problems) {
  // The master always serves notebooks: a 404 here is a failure, not a skip.
  const probe = await cluster.api('GET', '/api/v1/notebooks', undefined, alice.token);
  check(probe.status === 200, `GET /api/v1/notebooks answered ${probe.status}`);
  const { context, page } = await signedInPage(browser, alice, '/notebooks', problems);
  await page.getByRole('heading', { level: 1, name: 'Notebooks' }).waitFor({ timeout: 20000 });
  await checkA11y(page, 'the notebooks page');
  await page.getByLabel('Slots').fill('1');
  await page.getByRole('button', { name: 'Start notebook' }).click();
  const started = await page.getByText(/^Started notebook \d+\.$/).textContent();
  const id = Number(/\d+/.exec(started)[0]);
  log(`alice started notebook ${id}`);
  await waitFor(
    `notebook ${id} to run and its Jupyter to announce itself`,
    async () => {
      const n = (await cluster.api('GET', `/api/v1/notebooks/${id}`, undefined, alice.token)).body;
      return n.state === 'RUNNING' && n.service != null;
    },
    120000,
  );
  const open = page.locator(`button[aria-label="Open notebook ${id}"]:not([disabled])`);
  await open.waitFor({ timeout: 20000 });
  const [tree] = await Promise.all([context.waitForEvent('page'), open.click()]);
  await tree.waitForURL(new RegExp(`/proxy/${id}/tree`), { timeout: 30000 });
  const proxyOrigin = new URL(tree.url()).origin;
  check(proxyOrigin !== cluster.url, `the notebook opens on the proxy's own origin (${proxyOrigin})`);

  // Jupyter's own UI: New -> Python 3, a cell printing 6*7.
  await tree.locator('#new-dropdown-button').click();
  const [notebook] = await Promise.all([
    context.waitForEvent('page'),
    tree
      .locator('#new-menu')
      .getByText(/^Python 3/)
      .click(),
  ]);
  await notebook.locator('#kernel_indicator_icon.kernel_idle_icon').waitFor({ timeout: 60000 });
  await notebook.locator('.cell .CodeMirror').first().click();
  await notebook.keyboard.type('print(6*7)');
  await notebook.keyboard.press('Shift+Enter');
  await notebook.locator('.output_subarea pre', { hasText: /^42\s*$/ }).waitFor({ timeout: 30000 });
  await notebook.screenshot({ path: path.join(artifacts, 'notebook-cell.png') });
  log('the notebook printed 42');

  // Bob: no link, and no page without the proxy's cookie.
  const bobLink = await cluster.api('POST', `/api/v1/tasks/${id}/proxy/link`, undefined, bob.token);
  check(bobLink.status === 403, `bob's link to alice's notebook answered ${bobLink.status}, want 403`);
  const bare = await fetch(`${proxyOrigin}/proxy/${id}/`, { redirect: 'manual' });
  check(bare.status === 401, `the proxy without a cookie answered ${bare.status}, want 401`);
  const withToken = await fetch(`${proxyOrigin}/proxy/${id}/`, {
    redirect: 'manual',
    headers: { Authorization: `Bearer ${bob.token}` },
  });
  check(withToken.status === 401, `the proxy with bob's bearer token answered ${withToken.status}, want 401`);

  // An admin's link opens it.
  const adminLink = await cluster.api('POST', `/api/v1/tasks/${id}/proxy/link`);
  check(adminLink.status === 200, `the admin's link answered ${adminLink.status}`);
  const adminPage = await (await browser.newContext()).newPage();
  const answer = await adminPage.goto(adminLink.body.url);
  check(answer.status() === 200, `the admin's link ended at ${answer.status()} ${adminPage.url()}`);
  check(new RegExp(`/proxy/${id}/tree`).test(adminPage.url()), `the admin sees the tree page: ${adminPage.url()}`);

  // Kill from the page.
  await page.getByRole('button', { name: `Kill notebook ${id}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Kill notebook' }).click();
  await page.locator(`tr[data-task="${id}"][data-state="TERMINATED"]`).waitFor({ timeout: 60000 });
}

async function main() {
  for (const [what, p] of [
    ['ringmaster', path.join(binDir, 'ringmaster')],
    ['ringagent', path.join(binDir, 'ringagent')],
    ['the built web UI (build the webui target)', path.join(webuiDir, 'index.html')],
    ['the notebook launcher (build ringtrial_python)', path.join(buildDir, 'python', 'ring_notebook.py')],
    ['chromium (run deploy/install-deps.sh)', chromiumPath],
  ])
    check(fs.existsSync(p), `${what} is missing: ${p}`);
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });

  await cluster.startMaster();
  await cluster.startAgent('agent-1', 2);
  const alice = await cluster.createUser('alice');
  const bob = await cluster.createUser('bob');
  const browser = await cluster.launchBrowser();
  const problems = [];

  await shellCase(browser, alice, bob, problems);
  await notebookCase(browser, alice, bob, problems);

  check(problems.length === 0, `the browser saw no errors, but:\n  ${problems.join('\n  ')}`);
  cluster.checkAnswers();
  log('all checks passed');
}

await cluster.run(main, 270000);
