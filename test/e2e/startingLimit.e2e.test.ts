/**
 * The starting limit on the local control plane (cold-start storms): the extender restarted with
 * `startingLimit: {perNode: 5, perCore: 0.1}` on examples/cluster/heterogeneous.yaml, so the limits are
 * cpu16-0 1 (0.1 × 16 = 1.6 → 1), cpu64-0 5 and cpu192-0 5 (perNode, the smaller). Pods become Ready a few
 * seconds after they are bound (KWOK pod-ready Stage delay, through the pod annotation
 * e2e.sandbox-extender.io/ready-delay that cluster-up.sh wires in), so their starts overlap.
 *
 * a. a burst of 40 pods: while it runs, the extender's own model (/debug/nodes: starting + reserved) and the
 *    API's pod states (bound and not Ready, per node) are sampled; no node ever exceeds its limit in either, the
 *    limit is reached, some Filter calls are held by it, and every pod ends Running and Ready.
 * b. the requeue: every start slot held by pods that stay starting, then a pod W that the limit alone rejects
 *    (ProjectedPlacementFailed with `N sandboxes starting, limit M`); one slot is freed by making a blocker Ready
 *    (a status patch, as a kubelet would write it): W is placed on that node. How long W stayed Pending after the
 *    slot freed, and which queue event of kube-scheduler moved it (scheduler_queue_incoming_pods_total), are
 *    printed — with W's backoff long expired, right after its first rejection, and right after its fifth (a 10 s
 *    backoff). A W that kube-scheduler retried before the extender saw the Ready update is held again and waits
 *    for the next event: that is printed, and the next event is made (a blocker's label change).
 *
 * The extender's config is restored afterwards. Figures go to the console and .e2e/logs/starting-limit.txt.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SETUP_TIMEOUT_MS,
  STATE_DIR,
  component,
  fetchText,
  metricValue,
  run,
  setUpCluster,
  tearDownCluster,
  waitExtenderSettled,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import {
  Kubectl,
  columns,
  createNamespace,
  deleteNamespace,
  heterogeneousNodes,
  isRunningReady,
  podManifests,
  waitAllRunningReady,
  type PodView,
} from './kit/kubectl.js';

const SCHEDULER = 'sandbox-scheduler';
const LIMITS: Readonly<Record<string, number>> = { 'cpu16-0': 1, 'cpu64-0': 5, 'cpu192-0': 5 };
const BURST = 40;
const READY_DELAY = '2s';
const HELD = 'sandbox_extender_starting_limit_held_total';
const NUDGED = 'sandbox_extender_pods_nudged_total';
const TEST_TIMEOUT_MS = 300_000;

let env: ClusterEnv;
let kubectl: Kubectl;
let configChanged = false;
const report: string[] = [];

function say(text: string): void {
  console.log(text);
  report.push(text, '');
}

interface DebugNode {
  name: string;
  sandboxes: { starting: number; reserved: number; startingLimit: number | null };
  reservations: { uid: string; pod: string; ageSeconds: number }[];
}

const debugNodes = async () => JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as DebugNode[];
const podsOf = async (namespace: string) =>
  (await kubectl.json<{ items: PodView[] }>(['-n', namespace, 'get', 'pods'])).items;
const startingPerNode = (pods: readonly PodView[]) => {
  const counts = new Map<string, number>();
  for (const p of pods)
    if (p.spec.nodeName && !isRunningReady(p) && !p.metadata.deletionTimestamp)
      counts.set(p.spec.nodeName, (counts.get(p.spec.nodeName) ?? 0) + 1);
  return counts;
};

/** Pods with a KWOK Ready delay (the annotation cluster-up.sh's pod-ready stage reads). */
function delayedPods(namespace: string, prefix: string, count: number, delay: string): object[] {
  return podManifests({
    namespace,
    prefix,
    count,
    cpu: '1',
    memory: '2Gi',
    schedulerName: SCHEDULER,
    labels: { app: 'e2e-starting-limit' },
  }).map((p) => {
    const pod = p as { metadata: Record<string, unknown> };
    pod.metadata.annotations = { 'e2e.sandbox-extender.io/ready-delay': delay };
    return pod;
  });
}

/** kube-scheduler-sandbox's scheduler_queue_incoming_pods_total per `event/queue` (anonymous /metrics, self-signed TLS). */
async function queueMoves(): Promise<Map<string, number>> {
  const { stdout } = await run('curl', ['-ksS', '--max-time', '10', `${env.SANDBOX_SCHEDULER_URL}/metrics`]);
  const moves = new Map<string, number>();
  for (const m of stdout.matchAll(/^scheduler_queue_incoming_pods_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    moves.set(`${labels.event}/${labels.queue}`, Number(m[2]));
  }
  return moves;
}

const moved = (before: Map<string, number>, after: Map<string, number>) =>
  [...after]
    .filter(([k, v]) => v > (before.get(k) ?? 0))
    .map(([k, v]) => `${k} +${v - (before.get(k) ?? 0)}`)
    .join(', ') || 'none';

/** One line of a pod watch: the time it arrived (client side), the pod, its node and its Ready status. */
interface PodChange {
  readonly at: number;
  readonly name: string;
  readonly node: string;
  readonly ready: boolean;
}

/**
 * Watches the pods of a namespace (`kubectl get pods -w`), timing each change as it arrives. Differences between
 * two changes of the one stream are exact to the client's event loop, whatever kubectl's start-up costs.
 */
function watchPods(namespace: string): {
  until: (what: string, match: (c: PodChange) => boolean, timeoutMs: number) => Promise<PodChange>;
  stop: () => void;
} {
  const template = '{.metadata.name} {.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}';
  const child = spawn(
    env.KUBECTL!,
    [`--kubeconfig=${env.KUBECONFIG}`, '-n', namespace, 'get', 'pods', '-w', '-o', `jsonpath=${template}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const seen: PodChange[] = [];
  const waiters: { match: (c: PodChange) => boolean; ok: (c: PodChange) => void }[] = [];
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const at = Date.now();
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const [name = '', second = '', third = ''] = line.trim().split(/\s+/);
      // "name node True" once bound; "name True|False" or "name" while unbound.
      const bound = third !== '' || (second !== '' && second !== 'True' && second !== 'False');
      const change = { at, name, node: bound ? second : '', ready: (bound ? third : second) === 'True' };
      seen.push(change);
      for (const w of [...waiters]) if (w.match(change)) w.ok(change);
    }
  });
  const until = (what: string, match: (c: PodChange) => boolean, timeoutMs: number) =>
    new Promise<PodChange>((ok, bad) => {
      const earlier = seen.find(match);
      if (earlier) return ok(earlier);
      const timer = setTimeout(
        () => bad(new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what} in the pod watch`)),
        timeoutMs,
      );
      waiters.push({ match, ok: (c) => (clearTimeout(timer), ok(c)) });
    });
  return { until, stop: () => child.kill() };
}

async function cleanUp(namespace: string): Promise<void> {
  await waitExtenderSettled(env);
  await deleteNamespace(kubectl, namespace);
}

beforeAll(async () => {
  env = await setUpCluster();
  if (env.EXTENDER_MODE !== 'cluster')
    throw new Error(`startingLimit.e2e needs the extender in cluster mode, not ${env.EXTENDER_MODE}`);
  kubectl = new Kubectl(env);
  await heterogeneousNodes(kubectl);
  for (const line of (await kubectl.run(['get', 'namespaces', '-o', 'name'])).split('\n')) {
    if (line.startsWith('namespace/e2e-starting-')) await deleteNamespace(kubectl, line.slice('namespace/'.length)); // left by an interrupted run
  }
  const config = join(STATE_DIR, 'extender-starting-limit.yaml');
  writeFileSync(config, 'startingLimit: {perNode: 5, perCore: 0.1}\n');
  configChanged = true;
  await component(['restart', 'sandbox-extender', '--config', config]);
  const limits = Object.fromEntries((await debugNodes()).map((n) => [n.name, n.sandboxes.startingLimit]));
  expect(limits).toEqual(LIMITS);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  try {
    if (env && configChanged) await component(['restart', 'sandbox-extender']);
  } finally {
    if (report.length > 0) {
      mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
      writeFileSync(join(STATE_DIR, 'logs', 'starting-limit.txt'), `${report.join('\n')}\n`);
    }
    await tearDownCluster();
  }
}, 300_000);

describe('starting limit (perNode 5, perCore 0.1: cpu16-0 1, cpu64-0 5, cpu192-0 5)', () => {
  test(
    `a. a burst of ${BURST} pods Ready ${READY_DELAY} after binding: no node ever starts more than its limit (extender model and API), all end Ready`,
    async () => {
      const namespace = 'e2e-starting-burst';
      try {
        await createNamespace(kubectl, namespace);
        const heldBefore = metricValue(await fetchText(`${env.EXTENDER_URL}/metrics`), HELD);
        const peakModel = new Map<string, number>();
        const peakApi = new Map<string, number>();
        const over: string[] = [];
        let modelSamples = 0;
        let apiSamples = 0;
        let done = false;
        const sampleModel = async () => {
          while (!done) {
            for (const n of await debugNodes()) {
              const starting = n.sandboxes.starting + n.sandboxes.reserved;
              peakModel.set(n.name, Math.max(peakModel.get(n.name) ?? 0, starting));
              if (starting > LIMITS[n.name]!) over.push(`extender: ${n.name} ${starting} > ${LIMITS[n.name]}`);
            }
            modelSamples++;
            await new Promise((r) => setTimeout(r, 50));
          }
        };
        const sampleApi = async () => {
          while (!done) {
            for (const [node, starting] of startingPerNode(await podsOf(namespace))) {
              peakApi.set(node, Math.max(peakApi.get(node) ?? 0, starting));
              if (starting > LIMITS[node]!) over.push(`API: ${node} ${starting} > ${LIMITS[node]}`);
            }
            apiSamples++;
          }
        };
        const t0 = Date.now();
        const samplers = Promise.all([sampleModel(), sampleApi()]);
        let pods: PodView[];
        try {
          await kubectl.apply(delayedPods(namespace, 'sbx', BURST, READY_DELAY));
          pods = await waitAllRunningReady(kubectl, namespace, BURST, 240_000);
        } finally {
          done = true;
          await samplers;
        }
        const seconds = (Date.now() - t0) / 1000;
        const held = metricValue(await fetchText(`${env.EXTENDER_URL}/metrics`), HELD) - heldBefore;
        const perNode = new Map<string, number>();
        for (const p of pods) perNode.set(p.spec.nodeName!, (perNode.get(p.spec.nodeName!) ?? 0) + 1);
        say(
          [
            `a. Burst of ${BURST} pods (1 CPU / 2Gi), Ready ${READY_DELAY} after binding, starting limit perNode 5 + perCore 0.1:`,
            '',
            ...columns([
              ['node', 'limit', 'peak starting (extender model)', 'peak starting (API)', 'pods placed'],
              ...Object.keys(LIMITS).map((n) => [
                n,
                String(LIMITS[n]),
                String(peakModel.get(n) ?? 0),
                String(peakApi.get(n) ?? 0),
                String(perNode.get(n) ?? 0),
              ]),
            ]),
            '',
            `all ${BURST} Running and Ready ${seconds.toFixed(1)} s after the first create; ${modelSamples} model samples, ${apiSamples} API samples; Filter calls held by the limit: ${held}`,
          ].join('\n'),
        );
        expect(over).toEqual([]);
        expect(pods.every((p) => Object.keys(LIMITS).includes(p.spec.nodeName!))).toBe(true);
        // The limit was really in play: some node reached it, and pods had to wait for a start slot.
        expect(Object.keys(LIMITS).some((n) => (peakModel.get(n) ?? 0) === LIMITS[n])).toBe(true);
        expect(held).toBeGreaterThan(0);
        expect(modelSamples).toBeGreaterThan(10);
        expect(apiSamples).toBeGreaterThan(3);
      } finally {
        await cleanUp(namespace);
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'b. a pod rejected only by the limit is placed on the node whose start slot frees, once a starting pod is Ready',
    async () => {
      const namespace = 'e2e-starting-requeue';
      const slots = Object.values(LIMITS).reduce((a, b) => a + b, 0);
      try {
        await createNamespace(kubectl, namespace);
        // Blockers: every start slot taken by pods that stay starting (Ready only after an hour).
        await kubectl.apply(delayedPods(namespace, 'blocker', slots, '1h'));
        await waitFor(`${slots} blockers bound`, 120_000, async () =>
          (await podsOf(namespace)).filter((p) => p.spec.nodeName).length === slots ? true : undefined,
        );
        const rows: string[][] = [
          [
            'case',
            'Filter calls held',
            'last rejection → slot freed',
            'slot freed → W decided (extender)',
            'slot freed → W bound (watch)',
            'kube-scheduler queue moves meanwhile',
          ],
        ];
        const raced: string[] = [];
        const heldNow = async () => metricValue(await fetchText(`${env.EXTENDER_URL}/metrics`), HELD);
        const nudgedNow = async () =>
          metricValue(await fetchText(`${env.EXTENDER_URL}/metrics`), NUDGED, { result: 'requeued' });
        /**
         * One trial: W is created and rejected; then either `waitAfterRejectionMs` passes, or W is retried until the
         * limit has rejected it `attempts` times (each unrelated label change of a blocker, an assigned-pod update,
         * requeues it once its backoff is over), so its backoff is long; then one slot on cpu192-0 frees.
         */
        const trial = async (
          name: string,
          { waitAfterRejectionMs = 0, attempts = 1 }: { waitAfterRejectionMs?: number; attempts?: number },
        ) => {
          const heldBefore = await heldNow();
          const w = `${name}-00`;
          // Blockers on cpu192-0 (the node whose slot is freed below), the pod watch and the extender's decision time
          // (its reservation's age, read from /debug/nodes while it is held) are all ready before W exists.
          const blocker = (await podsOf(namespace)).find((p) => p.spec.nodeName === 'cpu192-0' && !isRunningReady(p))!;
          const watch = watchPods(namespace);
          let decidedAt: number | undefined;
          let polling = true;
          const poll = (async () => {
            while (polling && decidedAt === undefined) {
              const r = (await debugNodes()).flatMap((n) => n.reservations).find((x) => x.pod === `${namespace}/${w}`);
              if (r) decidedAt = Date.now() - r.ageSeconds * 1000;
              else await new Promise((ok) => setTimeout(ok, 5));
            }
          })();
          let freedAt: number;
          let boundAt: PodChange;
          let movesBefore: Map<string, number>;
          let rejectedAt: number;
          let heldAtFree = 0;
          let nudgedAtFree = 0;
          let reRejected = 0;
          let nudges = 0;
          try {
            await new Promise((r) => setTimeout(r, 500)); // the watch is open
            await kubectl.apply(delayedPods(namespace, name, 1, '1h')); // W stays starting once placed: the cluster is full again after it
            // W is rejected: PodScheduled=False, and the extender's Event names the limit.
            rejectedAt = await waitFor(`${w} rejected by the starting limit`, 60_000, async () => {
              const pod = await kubectl.json<{
                status: { conditions?: { type: string; status: string; reason?: string }[] };
              }>(['-n', namespace, 'get', 'pod', w]);
              return pod.status.conditions?.some(
                (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
              )
                ? Date.now()
                : undefined;
            });
            // The time of the last rejection: when the held counter last grew (W is the only pod waiting).
            for (let poke = 0, seen = (await heldNow()) - heldBefore; seen < attempts; poke++) {
              if (poke > 300) throw new Error(`${w} was not retried ${attempts} times`);
              await kubectl.run([
                '-n',
                namespace,
                'label',
                'pod',
                blocker.metadata.name,
                `e2e-poke=${poke}`,
                '--overwrite',
              ]);
              await new Promise((r) => setTimeout(r, 100));
              const held = (await heldNow()) - heldBefore;
              if (held > seen) [seen, rejectedAt] = [held, Date.now()];
            }
            if (waitAfterRejectionMs > 0) await new Promise((r) => setTimeout(r, waitAfterRejectionMs));
            // Free one slot on cpu192-0: one of its blockers becomes Ready, as a kubelet (or KWOK) would report it.
            movesBefore = await queueMoves();
            heldAtFree = await heldNow();
            nudgedAtFree = await nudgedNow();
            const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
            await kubectl.run([
              '-n',
              namespace,
              'patch',
              'pod',
              blocker.metadata.name,
              '--subresource=status',
              '--type=strategic',
              '-p',
              JSON.stringify({
                status: {
                  phase: 'Running',
                  conditions: [
                    { type: 'Ready', status: 'True', lastTransitionTime: now },
                    { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
                  ],
                },
              }),
            ]);
            freedAt = (
              await watch.until(
                `${blocker.metadata.name} Ready`,
                (c) => c.name === blocker.metadata.name && c.ready,
                60_000,
              )
            ).at;
            const bound = watch.until(`${w} bound`, (c) => c.name === w && c.node !== '', 120_000);
            // The Ready update requeues W in kube-scheduler. If kube-scheduler asks before the extender's own watch has
            // shown that update, the extender still counts the slot as taken and rejects W again; without a requeue W
            // would wait for the next cluster event (at worst podMaxInUnschedulablePodsDuration, 5 min). The extender
            // nudges it once it applies the update (requeue.raceWindowSeconds): W is bound within seconds either way,
            // and the race shows as a held Filter call after the slot freed plus a nudge.
            const first = await Promise.race([bound, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
            reRejected = (await heldNow()) - heldAtFree;
            nudges = (await nudgedNow()) - nudgedAtFree;
            if (first === null)
              throw new Error(
                `${w} not bound within 10 s of the slot freeing (held again ${reRejected}×, nudged ${nudges}×)`,
              );
            boundAt = first;
          } finally {
            watch.stop();
            polling = false;
            await poll;
          }
          const movesAfter = await queueMoves();
          const event = await waitFor(`the ProjectedPlacementFailed Event of ${w}`, 30_000, async () => {
            const list = await kubectl.json<{ items: { reason: string; message: string }[] }>([
              '-n',
              namespace,
              'get',
              'events',
              '--field-selector',
              `involvedObject.name=${w}`,
            ]);
            return list.items.find((e) => e.reason === 'ProjectedPlacementFailed')?.message;
          });
          expect(event).toMatch(
            /^0\/3 nodes fit projected capacity: 3 at the starting limit\. e\.g\. cpu\d+-0: \d sandboxes starting, limit \d$/,
          );
          expect(boundAt.node).toBe('cpu192-0');
          expect(boundAt.at).toBeGreaterThanOrEqual(freedAt);
          if (reRejected > 0) {
            raced.push(`${name}: held again ${reRejected}×, nudged ${nudges}×`);
            expect(nudges).toBeGreaterThanOrEqual(1); // the race was saved by the extender's requeue, not by a later event
          }
          rows.push([
            name,
            `${heldAtFree - heldBefore}${reRejected > 0 ? ` + ${reRejected} after` : ''}`,
            `${((freedAt - rejectedAt) / 1000).toFixed(1)} s`,
            decidedAt === undefined ? '(not seen)' : `${((decidedAt - freedAt) / 1000).toFixed(2)} s`,
            `${((boundAt.at - freedAt) / 1000).toFixed(2)} s${reRejected > 0 ? ' (raced; nudged)' : ''}`,
            moved(movesBefore, movesAfter),
          ]);
        };
        await trial('w-late', { waitAfterRejectionMs: 12_000 }); // past kube-scheduler's longest backoff (podMaxBackoffSeconds 10)
        await trial('w-early', {}); // within W's first backoff (1 s)
        await trial('w-retried', { attempts: 5 }); // rejected 5 times: a backoff of 10 s (1 s doubling, capped), as in a burst
        say(
          [
            `b. Requeue: all ${slots} start slots held, a pod W rejected by the limit alone, then one blocker on cpu192-0 made Ready:`,
            '',
            ...columns(rows),
            '',
            raced.length === 0
              ? 'every W was placed on the Ready update itself'
              : `kube-scheduler retried W before the extender applied the Ready update (${raced.join('; ')}); the extender's requeue placed it`,
          ].join('\n'),
        );
      } finally {
        await cleanUp(namespace);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
