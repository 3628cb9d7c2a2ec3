#!/usr/bin/env node
// Measures, on the running e2e control plane, how long a pod that the extender alone rejected waits once room
// frees in the extender's model, with each way of making kube-scheduler retry it (docs/adr/0006-requeue-nudge.md).
//
// Start a one-node cluster first (the issue's shape: 8 CPU / 32 GiB), e.g.
//   CLUSTER_NODES=8/32Gi npm run cluster:up && node test/e2e/measure-requeue.mjs --rounds 5
//
// Each round: four pods of 2 CPU labelled sandbox-extender.io/paused=true are bound to the node and set Succeeded
// (kube-scheduler does not see terminal pods; the extender counts paused pods whatever their phase), so the
// extender's Filter rejects a new 2-CPU pod of the sandbox-scheduler. Then one paused pod is deleted ("delete") or
// loses its label ("unpause"); once the extender's /debug/nodes shows the room, the nudge under test is sent and
// the time until the waiting pod is bound is measured (an API watch on the pod, from the moment the nudge request
// was sent). Nudges are sent as the extender's user (impersonated by the admin), with a temporary ClusterRole that
// the script creates and deletes. "none" waits --control-seconds without any nudge. "kube-scheduler" is the
// baseline: four plain Running pods fill the node, kube-scheduler itself rejects, one is deleted; the time runs
// from the delete (a round slower than --stall-seconds counts as a stall: the extender rejected the retry because
// its watch had not yet removed the deleted pod).
//
// "extender" measures this repository's own requeue (from the change itself to the pod bound; it needs the
// extender's RBAC for the requeue object, which cluster-up applies). --burst N measures a burst instead (below).
//
// Options: --burst N --rounds N (5) --baseline-rounds N (--rounds) --options a,b,... (all) --cases delete,unpause (both) --control-seconds S (40)
//          --stall-seconds S (15) --namespace NS (requeue-measure)
/* global fetch */
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const ROUNDS = Number(opt('rounds', '5'));
const BASELINE_ROUNDS = Number(opt('baseline-rounds', opt('rounds', '5')));
const CONTROL_S = Number(opt('control-seconds', '40'));
const STALL_S = Number(opt('stall-seconds', '15'));
const NS = opt('namespace', 'requeue-measure');
const ALL_OPTIONS = [
  'kube-scheduler',
  'extender',
  'none',
  'pod-annotation',
  'pod-annotation+vap',
  'pod-status-condition',
  'csistoragecapacity',
  'node-annotation',
];
const OPTIONS = opt('options', ALL_OPTIONS.join(',')).split(',');
const CASES = opt('cases', 'delete,unpause').split(',');
const PAUSED = 'sandbox-extender.io/paused';
const NUDGE_KEY = 'sandbox-extender.io/requeue';
const USER = 'sandbox-extender';
const DOORBELL = { namespace: 'kube-system', name: 'sandbox-extender-requeue-measure' }; // not the extender's own requeue object

const state = resolve(process.env.SANDBOX_E2E_STATE ?? '.e2e');
const env = Object.fromEntries(
  readFileSync(join(state, 'cluster.env'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
const pki = join(state, 'pki');
const agent = new https.Agent({
  ca: readFileSync(join(pki, 'ca.crt')),
  cert: readFileSync(join(pki, 'admin.crt')),
  key: readFileSync(join(pki, 'admin.key')),
  keepAlive: true,
});
const api = new URL(env.APISERVER_URL);

/** One API request as admin (or impersonating `as`); resolves with { status, body }. */
function request(method, path, body, { type = 'application/json', as } = {}) {
  return new Promise((ok, bad) => {
    const headers = { accept: 'application/json' };
    const payload =
      body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    if (payload) Object.assign(headers, { 'content-type': type, 'content-length': payload.length });
    if (as) headers['impersonate-user'] = as;
    const req = https.request({ host: api.hostname, port: api.port, path, method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let parsed = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        ok({ status: res.statusCode, body: parsed });
      });
    });
    req.on('error', bad);
    req.end(payload);
  });
}

async function must(method, path, body, options) {
  const res = await request(method, path, body, options);
  if (res.status >= 300)
    throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  return res.body;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, timeoutMs, check) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Resolves with the time (ms) the pod was first seen bound, or null after `timeoutMs`. The watch starts at `rv`. */
function watchBound(name, rv, timeoutMs) {
  return new Promise((ok, bad) => {
    const path = `/api/v1/namespaces/${NS}/pods?watch=1&allowWatchBookmarks=false&resourceVersion=${rv}&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
    let buffer = '';
    const timer = setTimeout(() => {
      req.destroy();
      ok(null);
    }, timeoutMs);
    const req = https.request(
      {
        host: api.hostname,
        port: api.port,
        path,
        method: 'GET',
        agent: new https.Agent({ ca: agent.options.ca, cert: agent.options.cert, key: agent.options.key }),
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          buffer += chunk;
          let nl;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (!line.trim()) continue;
            const event = JSON.parse(line);
            if (event.object?.spec?.nodeName) {
              clearTimeout(timer);
              const at = Date.now();
              req.destroy();
              ok(at);
              return;
            }
          }
        });
      },
    );
    req.on('error', (err) => {
      if (err.code !== 'ECONNRESET') bad(err);
    });
    req.end();
  });
}

function pod(name, { cpu = '2', memory = '4Gi', nodeName, schedulerName, labels = {} }) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      ...(schedulerName ? { schedulerName } : {}),
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'sandbox',
          image: 'registry.invalid/e2e/sandbox:1',
          resources: { requests: { cpu, memory }, limits: { cpu, memory } },
        },
      ],
    },
  };
}

const podPath = (name) => `/api/v1/namespaces/${NS}/pods/${name}`;
const getPod = (name) => must('GET', podPath(name));

async function extenderNode(node) {
  const res = await fetch(`${env.EXTENDER_URL}/debug/nodes/${node}`);
  return res.json();
}

async function deleteAllPods() {
  const list = await must('GET', `/api/v1/namespaces/${NS}/pods`);
  await Promise.all(list.items.map((p) => request('DELETE', podPath(p.metadata.name), { gracePeriodSeconds: 0 })));
  await until(
    'no pods left',
    60_000,
    async () => (await must('GET', `/api/v1/namespaces/${NS}/pods`)).items.length === 0,
  );
}

/** Pods of 2 CPU bound to `node` until it is full: paused and Succeeded (held only in the extender's model), or plain and Running. */
async function fillNode(node, kind) {
  const names = Array.from({ length: nodeCpu / 2 }, (_, i) => `fill-${roundNo}-${i}`);
  await Promise.all(
    names.map((n) =>
      must(
        'POST',
        `/api/v1/namespaces/${NS}/pods`,
        pod(n, { nodeName: node, labels: kind === 'paused' ? { [PAUSED]: 'true' } : {} }),
      ),
    ),
  );
  await until('the filler pods Running', 60_000, async () =>
    (await Promise.all(names.map(getPod))).every((p) => p.status?.phase === 'Running'),
  );
  if (kind === 'paused') {
    await Promise.all(
      names.map((n) =>
        must(
          'PATCH',
          `${podPath(n)}/status`,
          { status: { phase: 'Succeeded' } },
          { type: 'application/merge-patch+json' },
        ),
      ),
    );
    await until('the paused pods Succeeded', 30_000, async () =>
      (await Promise.all(names.map(getPod))).every((p) => p.status?.phase === 'Succeeded'),
    );
  }
  await until('the extender to count the node full', 30_000, async () => {
    const v = await extenderNode(node);
    return (kind === 'paused' ? v.paused.cpu : v.allocated.cpu) === nodeCpu * 1000;
  });
  return names;
}

/** Creates the waiting pod (or `name`) and waits until kube-scheduler has marked it unschedulable. */
async function createWaiting(name = waiting()) {
  await must(
    'POST',
    `/api/v1/namespaces/${NS}/pods`,
    pod(name, { schedulerName: env.SANDBOX_SCHEDULER_NAME ?? 'sandbox-scheduler' }),
  );
  const p = await until(`${name} marked unschedulable`, 30_000, async () => {
    const p = await getPod(name);
    return p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False') ? p : undefined;
  });
  await sleep(1000); // in kube-scheduler's unschedulable pool, not in flight
  const again = await getPod(name);
  if (again.spec.nodeName) throw new Error(`${name} was bound before any room was freed`);
  return { pod: again, message: p.status.conditions.find((c) => c.type === 'PodScheduled').message };
}

let counter = 0;
/** Names are unique per round: KWOK finishes deletions by name, and a late one must not hit the next round's pod. */
let roundNo = 0;
const waiting = () => `waiting-${roundNo}`;
const nudges = {
  'pod-annotation': () =>
    request(
      'PATCH',
      podPath(waiting()),
      { metadata: { annotations: { [NUDGE_KEY]: String(++counter) } } },
      { type: 'application/merge-patch+json', as: USER },
    ),
  'pod-annotation+vap': () =>
    request(
      'PATCH',
      podPath(waiting()),
      { metadata: { annotations: { [NUDGE_KEY]: String(++counter) } } },
      { type: 'application/merge-patch+json', as: USER },
    ),
  'pod-status-condition': () =>
    request(
      'PATCH',
      `${podPath(waiting())}/status`,
      {
        status: {
          conditions: [
            {
              type: 'sandbox-extender.io/Requeue',
              status: 'True',
              reason: 'CapacityFreed',
              message: `nudge ${++counter}`,
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      },
      { type: 'application/strategic-merge-patch+json', as: USER },
    ),
  csistoragecapacity: () =>
    request(
      'PATCH',
      `/apis/storage.k8s.io/v1/namespaces/${DOORBELL.namespace}/csistoragecapacities/${DOORBELL.name}`,
      { metadata: { annotations: { [NUDGE_KEY]: String(++counter) } } },
      { type: 'application/merge-patch+json', as: USER },
    ),
  'node-annotation': (node) =>
    request(
      'PATCH',
      `/api/v1/nodes/${node}`,
      { metadata: { annotations: { [NUDGE_KEY]: String(++counter) } } },
      { type: 'application/merge-patch+json', as: USER },
    ),
};

/** One round; returns seconds to bind (null: not bound within the wait). */
async function round(option, kase, node) {
  await deleteAllPods();
  roundNo++;
  if (option === 'kube-scheduler') {
    const names = await fillNode(node, 'running');
    const { message } = await createWaiting();
    if (/Insufficient cpu/.test(message) === false)
      throw new Error(`expected kube-scheduler's own rejection, got: ${message}`);
    const rv = (await getPod(waiting())).metadata.resourceVersion;
    const bound = watchBound(waiting(), rv, STALL_S * 1000);
    const t0 = Date.now();
    await must('DELETE', podPath(names[0]), { gracePeriodSeconds: 0 });
    const at = await bound;
    return at === null ? null : (at - t0) / 1000;
  }
  const names = await fillNode(node, 'paused');
  const { message } = await createWaiting();
  if (!/Insufficient cpu: requested/.test(message)) process.stderr.write(`  note: rejection message: ${message}\n`);
  const free = () =>
    kase === 'delete'
      ? must('DELETE', podPath(names[0]), { gracePeriodSeconds: 0 })
      : must(
          'PATCH',
          podPath(names[0]),
          { metadata: { labels: { [PAUSED]: null } } },
          { type: 'application/merge-patch+json' },
        );
  if (option === 'extender') {
    // The extender's own requeue (this repository's implementation): from the change to the pod bound.
    const rv = (await getPod(waiting())).metadata.resourceVersion;
    const bound = watchBound(waiting(), rv, 30_000);
    const t0 = Date.now();
    await free();
    const at = await bound;
    return at === null ? null : (at - t0) / 1000;
  }
  await free();
  await until("the room in the extender's model", 30_000, async () => (await extenderNode(node)).paused.cpu === 6000);
  const rv = (await getPod(waiting())).metadata.resourceVersion;
  const wait = option === 'none' ? CONTROL_S * 1000 : 30_000;
  const bound = watchBound(waiting(), rv, wait);
  await sleep(100);
  const t0 = Date.now();
  if (option !== 'none') {
    const res = await nudges[option](node);
    if (res.status >= 300) throw new Error(`${option}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
  const at = await bound;
  return at === null ? null : (at - t0) / 1000;
}

// ------------------------------------------------------------------------------------------------ set-up, teardown

const MEASURE_ROLE = 'sandbox-extender-requeue-measure';
const VAP_NAME = 'sandbox-extender-requeue-annotation';

/** The temporary permissions of the extender's user for the options measured (removed at the end). */
async function grant() {
  await request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: MEASURE_ROLE },
    rules: [
      { apiGroups: [''], resources: ['pods', 'pods/status', 'nodes'], verbs: ['patch'] },
      {
        apiGroups: ['storage.k8s.io'],
        resources: ['csistoragecapacities'],
        resourceNames: [DOORBELL.name],
        verbs: ['patch'],
      },
    ],
  });
  await request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: MEASURE_ROLE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: MEASURE_ROLE },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER }],
  });
  await request('POST', `/apis/storage.k8s.io/v1/namespaces/${DOORBELL.namespace}/csistoragecapacities`, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIStorageCapacity',
    metadata: { name: DOORBELL.name, namespace: DOORBELL.namespace },
    storageClassName: 'sandbox-extender.io-requeue',
  });
}

/**
 * The ValidatingAdmissionPolicy that narrows `patch pods` for the extender's user to one annotation key: spec,
 * labels, finalizers, owner references and every other annotation must stay as they were.
 */
const VAP = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: VAP_NAME },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['pods'] }],
    },
    matchConditions: [{ name: 'extender-user', expression: `request.userInfo.username == '${USER}'` }],
    variables: [
      { name: 'key', expression: `'${NUDGE_KEY}'` },
      { name: 'newAnnotations', expression: 'has(object.metadata.annotations) ? object.metadata.annotations : {}' },
      {
        name: 'oldAnnotations',
        expression: 'has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}',
      },
    ],
    validations: [
      {
        expression: 'object.spec == oldObject.spec',
        message: 'the extender may change only the requeue annotation (spec changed)',
      },
      {
        expression:
          '(has(object.metadata.labels) ? object.metadata.labels : {}) == (has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})',
        message: 'the extender may change only the requeue annotation (labels changed)',
      },
      {
        expression:
          '(has(object.metadata.finalizers) ? object.metadata.finalizers : []) == (has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : [])',
        message: 'the extender may change only the requeue annotation (finalizers changed)',
      },
      {
        expression:
          '(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) == (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : [])',
        message: 'the extender may change only the requeue annotation (owner references changed)',
      },
      {
        expression:
          'variables.newAnnotations.all(k, k == variables.key || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.newAnnotations[k])) && variables.oldAnnotations.all(k, k == variables.key || k in variables.newAnnotations)',
        message: 'the extender may change only the requeue annotation (another annotation changed)',
      },
    ],
  },
};

async function installVap() {
  await must('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', VAP);
  await must('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: VAP_NAME },
    spec: { policyName: VAP_NAME, validationActions: ['Deny'] },
  });
  // The policy takes effect once the API server has compiled it: probe with a change it must refuse.
  await must('POST', `/api/v1/namespaces/${NS}/pods`, pod('vap-probe', {}));
  await until(
    'the policy to refuse a label change by the extender',
    30_000,
    async () =>
      (
        await request(
          'PATCH',
          podPath('vap-probe'),
          { metadata: { labels: { probe: String(Date.now()) } } },
          { type: 'application/merge-patch+json', as: USER },
        )
      ).status === 422 || undefined,
  );
  const checks = [
    ['the requeue annotation', { metadata: { annotations: { [NUDGE_KEY]: 'x' } } }, 200],
    ['a label', { metadata: { labels: { other: 'x' } } }, 422],
    ['another annotation', { metadata: { annotations: { other: 'x' } } }, 422],
    ['spec.activeDeadlineSeconds', { spec: { activeDeadlineSeconds: 5 } }, 422],
    ['a toleration', { spec: { tolerations: [{ key: 'k', operator: 'Exists' }] } }, 422],
  ];
  const rows = [];
  for (const [what, patch, expected] of checks) {
    const res = await request('PATCH', podPath('vap-probe'), patch, { type: 'application/merge-patch+json', as: USER });
    rows.push(
      `  VAP: extender patches ${what}: HTTP ${res.status} (expected ${expected})${res.status === expected ? '' : '  <-- UNEXPECTED'}`,
    );
  }
  await request('DELETE', podPath('vap-probe'), { gracePeriodSeconds: 0 });
  return rows;
}

async function cleanUp() {
  await request('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${VAP_NAME}`);
  await request('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${VAP_NAME}`);
  await request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${MEASURE_ROLE}`);
  await request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${MEASURE_ROLE}`);
  await request(
    'DELETE',
    `/apis/storage.k8s.io/v1/namespaces/${DOORBELL.namespace}/csistoragecapacities/${DOORBELL.name}`,
  );
  await request('DELETE', `/api/v1/namespaces/${NS}`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * --burst N: the node full of paused Succeeded pods, N waiting pods rejected by the extender, then N paused pods
 * deleted at once: the time until all N are bound, and how many requeue writes the extender made for them
 * (its log lines) against the pods it counted as nudged.
 */
async function burst(node, count) {
  await deleteAllPods();
  roundNo++;
  if (2 * count > nodeCpu) throw new Error(`--burst ${count} needs a node of at least ${2 * count} CPU`);
  const names = await fillNode(node, 'paused');
  const waitingNames = Array.from({ length: count }, (_, i) => `burst-${roundNo}-${i}`);
  await Promise.all(waitingNames.map((n) => createWaiting(n)));
  const logFile = join(state, 'logs', 'sandbox-extender.log');
  const logBefore = readFileSync(logFile, 'utf8').length;
  const metric = async () => {
    const text = await (await fetch(`${env.EXTENDER_URL}/metrics`)).text();
    return Number(/^sandbox_extender_pods_nudged_total\{result="requeued"\} (\S+)/m.exec(text)?.[1] ?? 0);
  };
  const nudgedBefore = await metric();
  const t0 = Date.now();
  await Promise.all(names.slice(0, count).map((n) => must('DELETE', podPath(n), { gracePeriodSeconds: 0 })));
  await until('every burst pod bound', 120_000, async () =>
    (await Promise.all(waitingNames.map(getPod))).every((p) => p.spec.nodeName),
  );
  const seconds = (Date.now() - t0) / 1000;
  await sleep(1500);
  const rounds = readFileSync(logFile, 'utf8')
    .slice(logBefore)
    .split('\n')
    .filter((l) => l.includes('asked kube-scheduler to retry')).length;
  return `burst ${count}: ${count} paused pods deleted at once -> all ${count} waiting pods bound after ${seconds.toFixed(2)} s; requeue writes ${rounds}, pods nudged ${(await metric()) - nudgedBefore}`;
}

let nodeCpu = 8;

async function main() {
  const nodes = (await must('GET', '/api/v1/nodes')).items;
  const burstCount = Number(opt('burst', '0'));
  if (nodes.length !== 1 || (!burstCount && nodes[0].status.allocatable.cpu !== '8'))
    throw new Error(
      'run on a one-node cluster of 8 CPU: CLUSTER_NODES=8/32Gi npm run cluster:up (--burst N: a larger node)',
    );
  const node = nodes[0].metadata.name;
  nodeCpu = Number(nodes[0].status.allocatable.cpu);
  await until(
    `namespace ${NS} from an earlier run gone`,
    120_000,
    async () => (await request('GET', `/api/v1/namespaces/${NS}`)).body?.status?.phase !== 'Terminating' || undefined,
  );
  await request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await until(
    'the default ServiceAccount',
    60_000,
    async () => (await request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200 || undefined,
  );
  await grant();
  const lines = [];
  try {
    if (burstCount) lines.push(await burst(node, burstCount));
    for (const option of burstCount ? [] : OPTIONS) {
      if (option === 'pod-annotation+vap') lines.push(...(await installVap()));
      for (const kase of option === 'kube-scheduler' ? ['delete-running'] : CASES) {
        const times = [];
        let missed = 0;
        const rounds = option === 'none' ? 1 : option === 'kube-scheduler' ? BASELINE_ROUNDS : ROUNDS;
        for (let i = 0; i < rounds; i++) {
          const s = await round(option, kase, node);
          if (s === null) missed++;
          else times.push(s);
          process.stderr.write(
            `  ${option} ${kase} round ${i + 1}: ${s === null ? 'not bound' : `${s.toFixed(3)} s`}\n`,
          );
        }
        const limit = option === 'none' ? CONTROL_S : option === 'kube-scheduler' ? STALL_S : 30;
        const f = (x) => x.toFixed(3);
        lines.push(
          `${option.padEnd(22)} ${kase.padEnd(15)} rounds ${String(rounds).padStart(2)}  bound ${String(times.length).padStart(2)}  median ${times.length ? f(median(times)) : '   -  '} s  max ${times.length ? f(Math.max(...times)) : '   -  '} s${missed ? `  not bound within ${limit} s: ${missed}` : ''}`,
        );
        process.stderr.write(`${lines.at(-1)}\n`);
      }
    }
  } finally {
    await deleteAllPods().catch(() => undefined);
    await cleanUp();
  }
  console.log(
    `time from the nudge (kube-scheduler: from the delete) to the waiting pod bound; node ${node}, extender ${env.EXTENDER_URL}`,
  );
  for (const l of lines) console.log(l);
}

main().catch((err) => {
  console.error(err.stack ?? String(err));
  cleanUp().finally(() => process.exit(1));
});
