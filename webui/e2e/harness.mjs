// What the web UI's browser tests share: the daemons of the build started on
// 127.0.0.1 free ports (and every one stopped at the end, also on a failure,
// a signal or a watchdog), waiting, signing in, chromium through
// playwright-core, and the API answers a browser got, checked against
// docs/openapi.json by tests/openapi/check_answers.mjs.
//
// Every page a test visits can be checked with axe-core (checkA11y): the
// WCAG 2.1 A and AA rules, run in the page; a violation fails the test and
// is printed with the elements it found.
//
// Environment (CTest sets them): RING_BIN_DIR, RING_BUILD_DIR,
// RING_SOURCE_DIR, RING_ARTIFACTS_DIR; CHROMIUM (default /usr/bin/chromium);
// RING_E2E_HEADED=1 shows the browser.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const sourceDir = process.env.RING_SOURCE_DIR ?? path.resolve(here, '../..');
export const buildDir = process.env.RING_BUILD_DIR ?? path.join(sourceDir, 'build');
export const binDir = process.env.RING_BIN_DIR ?? path.join(buildDir, 'bin');
export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const webuiDir = path.join(buildDir, 'webui');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

// axe-core's rules for WCAG 2.1 levels A and AA.
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
let axeSource = null;

// Runs axe-core in `page` (injected through the DevTools protocol, which the
// page's Content-Security-Policy does not govern) and throws, listing every
// violation with its impact, help and elements, when there is any. `what`
// names the page in the message.
export async function checkA11y(page, what) {
  axeSource ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async (tags) => {
    const result = await window.axe.run(document, {
      runOnly: { type: 'tag', values: tags },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`),
    }));
  }, WCAG_TAGS);
  if (violations.length === 0) return;
  const text = violations
    .map((v) => `  ${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `    - ${n}`).join('\n')}`)
    .join('\n');
  throw new Error(`axe-core found ${violations.length} WCAG 2.1 AA violation(s) on ${what}:\n${text}`);
}

export async function waitFor(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`,
  );
}

// One test's cluster: its temporary folder, the daemons it started, the
// browser. `run(main)` runs the test and always cleans up; the exit code
// says whether it passed.
export class Cluster {
  constructor(name, artifacts) {
    this.name = name;
    this.artifacts = artifacts;
    this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `ring-${name}-`));
    this.children = [];
    this.browser = null;
    this.failed = false;
    this.answers = [];
    // The master's first user: admin, with a random password in a file only
    // we may read.
    this.adminPassword = crypto.randomBytes(18).toString('base64url');
    this.passwordFile = path.join(this.tmp, 'admin-password');
    fs.writeFileSync(this.passwordFile, this.adminPassword, { mode: 0o600 });
    this.url = null;
    this.adminToken = null;
  }

  log(...args) {
    console.log(`[${this.name} ${new Date().toISOString().slice(11, 19)}]`, ...args);
  }

  start(name, argv) {
    const out = fs.openSync(path.join(this.tmp, `${name}.log`), 'a');
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', out, out] });
    child.name = name;
    this.children.push(child);
    return child;
  }

  async stopAll() {
    // Agents first (they stop their tasks), then the master.
    for (const child of [...this.children].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    }
  }

  async cleanup() {
    try {
      await this.browser?.close();
    } catch {
      // already gone
    }
    await this.stopAll();
    if (this.failed) {
      fs.mkdirSync(this.artifacts, { recursive: true });
      for (const f of fs.readdirSync(this.tmp).filter((f) => f.endsWith('.log')))
        fs.copyFileSync(path.join(this.tmp, f), path.join(this.artifacts, f));
      this.log(`daemon logs copied to ${this.artifacts}`);
    }
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }

  // Runs `main(this)`; fails, and still stops everything, after `watchdogMs`
  // (well before CTest's timeout would kill this process and orphan the
  // daemons) or on SIGINT/SIGTERM. Exits the process with its result.
  async run(main, watchdogMs) {
    for (const sig of ['SIGINT', 'SIGTERM'])
      process.on(sig, async () => {
        this.failed = true;
        await this.cleanup();
        process.exit(1);
      });
    const watchdog = setTimeout(async () => {
      console.error(`[${this.name}] FAILED: still running after ${watchdogMs / 1000} s`);
      this.failed = true;
      await this.cleanup();
      process.exit(1);
    }, watchdogMs);
    try {
      await main(this);
    } catch (e) {
      this.failed = true;
      console.error(`[${this.name}] FAILED: ${e.stack ?? e}`);
    } finally {
      clearTimeout(watchdog);
      await this.cleanup();
    }
    process.exit(this.failed ? 1 : 0);
  }

  // Starts ringmaster serving the built web UI; signs this script in as admin.
  async startMaster(extraArgs = []) {
    const portFile = path.join(this.tmp, 'master.port');
    this.start('master', [
      path.join(binDir, 'ringmaster'),
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      path.join(this.tmp, 'master'),
      '--port-file',
      portFile,
      '--webui-dir',
      webuiDir,
      '--admin-password-file',
      this.passwordFile,
      ...extraArgs,
    ]);
    const port = await waitFor(
      'the master port file',
      () => fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim(),
      20000,
    );
    this.url = `http://127.0.0.1:${port}`;
    this.log(`master at ${this.url}`);
    this.adminToken = await this.login('admin', this.adminPassword);
  }

  // Starts a ringagent with `slots` CPU slots in single-user mode (tasks run
  // as this script's user) and waits until the master lists it connected.
  async startAgent(id, slots) {
    this.start(id, [
      path.join(binDir, 'ringagent'),
      '--master',
      this.url,
      '--id',
      id,
      '--cpu-slots',
      String(slots),
      '--work-dir',
      path.join(this.tmp, id),
      '--state-dir',
      path.join(this.tmp, `${id}-state`),
      '--token-file',
      path.join(this.tmp, 'master', 'cluster-token'),
      '--single-user',
    ]);
    await waitFor(
      `agent ${id} to connect`,
      async () =>
        (await this.api('GET', '/api/v1/agents')).body.agents.some((a) => a.id === id && a.state === 'connected'),
      20000,
    );
  }

  async login(username, password) {
    const res = await fetch(`${this.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    const body = await res.json();
    check(res.status === 200 && typeof body.token === 'string', `login answered ${res.status} ${JSON.stringify(body)}`);
    return body.token;
  }

  // Creates a user (as admin) with a random password; returns {name, password, token}.
  async createUser(username) {
    const password = crypto.randomBytes(12).toString('base64url');
    const created = await this.api('POST', '/api/v1/users', { username, password, role: 'user' });
    check(created.status === 201, `creating user ${username} answered ${created.status}`);
    return { name: username, password, token: await this.login(username, password) };
  }

  // One API call: {status, body} (body parsed when JSON, else the text).
  async api(method, target, body, token = this.adminToken) {
    const headers = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${this.url}${target}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed };
  }

  // The status of a WebSocket upgrade request to `target` (101 when
  // accepted; the socket is then closed at once), with `headers` added.
  upgradeStatus(target, headers = {}) {
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.url}${target}`, {
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'),
          ...headers,
        },
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode);
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
  }

  async launchBrowser() {
    this.browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: !process.env.RING_E2E_HEADED,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    return this.browser;
  }

  // Records the API answers `page` gets, to be checked at the end. A body
  // that cannot be read (a long poll aborted when the page changed) leaves
  // nothing to check.
  recordAnswers(page) {
    page.on('response', async (r) => {
      const { origin, pathname, search } = new URL(r.url());
      if (origin !== this.url || !pathname.startsWith('/api/')) return;
      let body;
      try {
        body = r.status() === 304 ? '' : await r.text();
      } catch {
        return;
      }
      this.answers.push({
        method: r.request().method(),
        target: pathname + search,
        status: r.status(),
        content_type: r.headers()['content-type'] ?? '',
        body,
        body_bytes: Buffer.byteLength(body),
      });
    });
  }

  checkAnswers() {
    const file = path.join(this.tmp, 'api-answers.jsonl');
    fs.writeFileSync(file, this.answers.map((a) => JSON.stringify(a)).join('\n') + '\n');
    const run = spawnSync(
      process.execPath,
      [
        path.join(sourceDir, 'tests', 'openapi', 'check_answers.mjs'),
        path.join(sourceDir, 'docs', 'openapi.json'),
        file,
      ],
      { encoding: 'utf8' },
    );
    check(run.status === 0, `answers that docs/openapi.json does not describe:\n${run.stdout}${run.stderr}`);
    this.log(run.stdout.trim());
  }
}
