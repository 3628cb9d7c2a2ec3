#!/usr/bin/env node
// Runs the Dockerfile without a container engine: every stage's WORKDIR, ENV, COPY and RUN step is executed as
// written, in a clean folder per stage (the build context made from .dockerignore), with the local Node 20 in
// place of the base images. Then the final stage's ENTRYPOINT is started the way the image runs it (serve, in
// snapshot mode, on a free loopback port) and /healthz, /readyz, /filter and /metrics are checked, and the
// runtime stage is checked to hold no dev dependency and to run as a non-root user.
//
// Because the steps are read from the Dockerfile rather than repeated here, the check cannot drift from it: an
// instruction it does not know (or a RUN in the shell-less runtime stage) fails the check with the line.
//
//   node scripts/check-dockerfile.mjs [--keep]      (--keep leaves the work folder for inspection)
//
// What it cannot check without an engine: that the base images exist and behave like the local Node 20 (the
// FROM lines are checked to name Node 20 images), file ownership, and the image's filesystem layout beyond the
// paths the Dockerfile itself uses.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/* global fetch */
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KEEP = process.argv.includes('--keep');
const SUPPORTED = new Set(['ARG', 'FROM', 'WORKDIR', 'ENV', 'COPY', 'RUN', 'USER', 'ENTRYPOINT', 'CMD', 'EXPOSE', 'LABEL']);
const DEV_ONLY = ['typescript', 'jest', 'ts-jest', 'eslint', 'supertest', 'fast-check'];

const log = (msg) => process.stdout.write(`[check-dockerfile] ${msg}\n`);
class CheckFailed extends Error {}
/** Throws; main() reports it after stopping what it started. */
function fail(msg) {
  throw new CheckFailed(msg);
}

// ------------------------------------------------------------------------------------------------ parsing
/** Instructions of the Dockerfile: continuation lines joined, comments and parser directives dropped. */
function parseDockerfile(text) {
  const out = [];
  let buf = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!buf && (/^\s*#/.test(line) || !line.trim())) return;
    if (!buf) start = i + 1;
    if (/\\\s*$/.test(line)) {
      buf += `${line.replace(/\\\s*$/, '')} `;
      return;
    }
    buf += line;
    const m = /^\s*(\w+)\s+([\s\S]*)$/.exec(buf);
    if (!m) fail(`Dockerfile:${start}: cannot parse "${buf}"`);
    out.push({ line: start, op: m[1].toUpperCase(), args: m[2].trim() });
    buf = '';
  });
  return out;
}

function substitute(value, vars, where) {
  return value.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => {
    const name = a ?? b;
    if (!(name in vars)) fail(`${where}: unknown variable ${name}`);
    return vars[name];
  });
}

/** KEY=VALUE pairs (ENV, ARG); values may be double-quoted. */
function keyValues(args, where) {
  const pairs = {};
  for (const m of args.matchAll(/(\w+)=("([^"]*)"|\S*)/g)) pairs[m[1]] = m[3] ?? m[2];
  if (!Object.keys(pairs).length) fail(`${where}: expected KEY=VALUE`);
  return pairs;
}

function execForm(args, where) {
  try {
    const v = JSON.parse(args);
    if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v;
  } catch {
    /* fall through */
  }
  return fail(`${where}: only the exec form ["...", "..."] is supported here, got ${args}`);
}

// ------------------------------------------------------------------------------------------------ context
/** The build context as .dockerignore allows it: only the form "*" followed by "!path" lines. */
function buildContext(into) {
  const lines = readFileSync(join(REPO, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  if (lines[0] !== '*' || lines.slice(1).some((l) => !l.startsWith('!'))) {
    fail('.dockerignore must be an allow-list: "*" and then "!path" lines (that is the form this check reproduces)');
  }
  mkdirSync(into, { recursive: true });
  for (const entry of lines.slice(1).map((l) => l.slice(1).replace(/\/$/, ''))) {
    const from = join(REPO, entry);
    if (!existsSync(from)) fail(`.dockerignore allows ${entry}, which does not exist`);
    cpSync(from, join(into, entry), { recursive: true });
  }
  return lines.slice(1).map((l) => l.slice(1));
}

// ------------------------------------------------------------------------------------------------ stages
function copyInto(srcAbs, destAbs, destIsDir) {
  if (statSync(srcAbs).isDirectory()) {
    // Docker copies a directory's contents, not the directory itself.
    mkdirSync(destAbs, { recursive: true });
    for (const child of readdirSync(srcAbs)) cpSync(join(srcAbs, child), join(destAbs, child), { recursive: true });
  } else {
    const target = destIsDir ? join(destAbs, basename(srcAbs)) : destAbs;
    mkdirSync(dirname(target), { recursive: true });
    cpSync(srcAbs, target);
  }
}

function run(cmd, args, opts) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  return r.status === 0;
}

function freePort() {
  return new Promise((ok, bad) => {
    const s = createServer();
    s.once('error', bad);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function main() {
  const nodeMajor = Number(process.versions.node.split('.')[0]);
  if (nodeMajor !== 20) fail(`the images are Node 20; this check needs a local Node 20, not ${process.version}`);
  const instructions = parseDockerfile(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
  const work = mkdtempSync(join(tmpdir(), 'sandbox-extender-dockerfile-'));
  log(`work folder ${work}`);
  try {
    await checkIn(work, instructions);
  } finally {
    if (KEEP) log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  log('OK: the Dockerfile builds and the image command serves');
}

async function checkIn(work, instructions) {
  const context = join(work, 'context');
  log(`build context from .dockerignore: ${buildContext(context).join(' ')}`);

  const globalArgs = {};
  const stages = []; // { name, base, root, workdir, env, user, entrypoint, cmd, runs }
  let stage;
  for (const ins of instructions) {
    const where = `Dockerfile:${ins.line} ${ins.op}`;
    if (!SUPPORTED.has(ins.op)) fail(`${where}: this check does not know ${ins.op}; extend scripts/check-dockerfile.mjs`);
    if (ins.op === 'ARG') {
      const m = /^(\w+)(?:=(.*))?$/.exec(ins.args);
      if (!m) fail(`${where}: cannot parse ${ins.args}`);
      (stage ? stage.args : globalArgs)[m[1]] = m[2] ?? '';
      continue;
    }
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) fail(`${where}: cannot parse ${ins.args}`);
      const image = substitute(m[1], globalArgs, where);
      const name = m[2] ?? String(stages.length);
      const root = join(work, 'stages', name);
      const parent = stages.find((s) => s.name === image);
      if (parent) cpSync(parent.root, root, { recursive: true });
      else {
        if (!/(^|\/)node:20([.-]|$)|nodejs20/.test(image)) fail(`${where}: ${image} is not a Node 20 image (the check stands in the local Node 20 for it)`);
        mkdirSync(root, { recursive: true });
      }
      stage = { name, image, root, workdir: '/', env: { ...(parent?.env ?? {}) }, args: {}, runs: 0, copies: [], user: undefined, entrypoint: undefined, cmd: undefined };
      stages.push(stage);
      log(`stage ${name}: FROM ${image}`);
      continue;
    }
    if (!stage) fail(`${where}: before the first FROM`);
    const vars = { ...globalArgs, ...stage.args, ...stage.env };
    switch (ins.op) {
      case 'WORKDIR':
        stage.workdir = posix.resolve(stage.workdir, substitute(ins.args, vars, where));
        mkdirSync(join(stage.root, stage.workdir), { recursive: true });
        break;
      case 'ENV':
        Object.assign(stage.env, keyValues(substitute(ins.args, vars, where), where));
        break;
      case 'USER':
        stage.user = ins.args;
        break;
      case 'ENTRYPOINT':
        stage.entrypoint = execForm(ins.args, where);
        break;
      case 'CMD':
        stage.cmd = execForm(ins.args, where);
        break;
      case 'EXPOSE':
      case 'LABEL':
        break;
      case 'COPY': {
        const words = ins.args.split(/\s+/);
        let from;
        while (words[0]?.startsWith('--')) {
          const flag = words.shift();
          if (flag.startsWith('--from=')) from = flag.slice(7);
          else if (!/^--(chown|chmod|link)(=|$)/.test(flag)) fail(`${where}: unsupported flag ${flag}`);
        }
        if (words.length < 2) fail(`${where}: COPY needs a source and a destination`);
        const dest = words.pop();
        const destAbs = join(stage.root, posix.resolve(stage.workdir, dest));
        const destIsDir = dest.endsWith('/') || dest === '.' || words.length > 1;
        let srcRoot = context;
        let srcBase = '/';
        if (from) {
          const source = stages.find((s) => s.name === from);
          if (!source) fail(`${where}: --from=${from} names no earlier stage`);
          srcRoot = source.root;
          srcBase = source.workdir;
        }
        for (const src of words) {
          const srcAbs = from ? join(srcRoot, posix.resolve(srcBase, src)) : join(srcRoot, posix.normalize(src));
          if (!existsSync(srcAbs)) fail(`${where}: ${src} does not exist in ${from ? `stage ${from}` : 'the build context (.dockerignore)'}`);
          copyInto(srcAbs, destAbs, destIsDir);
        }
        stage.copies.push(ins.args);
        log(`  COPY ${ins.args}`);
        break;
      }
      case 'RUN': {
        const command = ins.args.startsWith('[') ? execForm(ins.args, where) : ['bash', '-c', ins.args];
        log(`  RUN ${ins.args}   (in ${stage.name}:${stage.workdir})`);
        // The stage's ENV applies; PATH stays the local one (the image's PATH names its own folders).
        const env = { ...process.env, ...stage.env, PATH: process.env.PATH, npm_config_update_notifier: 'false' };
        const t0 = Date.now();
        if (!run(command[0], command.slice(1), { cwd: join(stage.root, stage.workdir), env })) fail(`${where}: RUN ${ins.args} failed`);
        log(`  ... ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        stage.runs++;
        break;
      }
    }
  }

  // ---------------------------------------------------------------------------------------------- runtime stage
  const final = stages.at(-1);
  if (!final || stages.length < 2) fail('expected a multi-stage Dockerfile');
  if (final.runs > 0) fail(`the runtime stage runs ${final.runs} RUN step(s); it is meant to be shell-less (distroless)`);
  if (!/distroless|slim/.test(final.image)) fail(`the runtime image ${final.image} is neither distroless nor slim`);
  if (!final.user || /^(0|root)(:|$)/.test(final.user)) fail(`the runtime stage must set USER to a non-root user (got ${final.user ?? 'none'})`);
  if (!final.entrypoint) fail('the runtime stage has no ENTRYPOINT');
  const nodeDir = posix.dirname(final.entrypoint[0]);
  if (basename(final.entrypoint[0]) !== 'node' || !(final.env.PATH ?? '').split(':').includes(nodeDir)) {
    fail(`the runtime ENTRYPOINT must start with the image's node and ENV PATH must contain its folder ${nodeDir} (the chart's metrics-gateway container runs \`node\`)`);
  }
  if (final.cmd?.[0] !== 'serve') fail(`the image's default command must be serve, got CMD ${JSON.stringify(final.cmd)}`);
  const nodeModules = join(final.root, final.workdir, 'node_modules');
  for (const dev of DEV_ONLY) if (existsSync(join(nodeModules, dev))) fail(`dev dependency ${dev} is in the runtime stage's node_modules`);
  const lock = JSON.parse(readFileSync(join(nodeModules, '.package-lock.json'), 'utf8'));
  const devEntries = Object.entries(lock.packages ?? {}).filter(([, p]) => p.dev);
  if (devEntries.length) fail(`the runtime node_modules holds dev packages: ${devEntries.slice(0, 5).map(([k]) => k).join(', ')}`);
  log(`runtime stage: ${final.image}, USER ${final.user}, ${Object.keys(lock.packages ?? {}).length - 1} production packages, no dev dependency`);

  // The ENTRYPOINT with the local node for the image's, and its paths inside the stage's folder.
  const argv = final.entrypoint.map((a, i) => (i === 0 && basename(a) === 'node' ? process.execPath : a.startsWith('/') && existsSync(join(final.root, a)) ? join(final.root, a) : a));
  const port = await freePort();
  const snapshot = join(REPO, 'examples', 'snapshot.json');
  const args = [...argv.slice(1), 'serve', '--snapshot', snapshot, '--host', '127.0.0.1', '--port', String(port)];
  log(`start: ${final.entrypoint.join(' ')} serve --snapshot examples/snapshot.json --port ${port}`);
  const env = { ...final.env, PATH: dirname(process.execPath), HOME: join(work, 'home') };
  const child = spawn(argv[0], args, { cwd: join(final.root, final.workdir), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((ok) => child.once('exit', (code, signal) => ok({ code, signal })));
  const base = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) fail(`the extender exited (${child.exitCode}) before answering:\n${output}`);
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) fail(`no answer on ${base}/healthz within 20 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const path of ['/healthz', '/readyz']) {
      const res = await fetch(`${base}${path}`);
      const text = await res.text();
      if (res.status !== 200 || text.trim() !== 'ok') fail(`GET ${path}: HTTP ${res.status} ${text}`);
      log(`GET ${path}: 200 ${text.trim()}`);
    }
    const body = readFileSync(join(REPO, 'examples', 'requests', 'filter-nodenames.json'), 'utf8');
    const filter = await fetch(`${base}/filter`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const result = await filter.json();
    if (filter.status !== 200 || !Array.isArray(result.NodeNames) || result.NodeNames.length === 0) fail(`POST /filter: HTTP ${filter.status} ${JSON.stringify(result)}`);
    log(`POST /filter: 200, NodeNames ${JSON.stringify(result.NodeNames)}`);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    if (!/^sandbox_extender_http_requests_total\{verb="filter",code="200"\} 1$/m.test(metrics)) fail(`GET /metrics does not count the filter call:\n${metrics.slice(0, 2000)}`);
    log('GET /metrics: sandbox_extender_http_requests_total{verb="filter",code="200"} 1');
  } finally {
    child.kill('SIGTERM');
    const { code, signal } = await exited;
    log(`stopped the extender (exit ${code ?? signal})`);
  }
}

main().catch((err) => {
  process.stderr.write(`[check-dockerfile] FAILED: ${err instanceof CheckFailed ? err.message : (err.stack ?? String(err))}\n`);
  process.exitCode = 1;
});
