/**
 * A warm-up before the server listens: the Filter path run `decisions` times on a scratch placement of its
 * own (same configuration, synthetic nodes and pods), so that V8 has compiled the verbs' code before
 * kube-scheduler's first burst (the first ~250 calls after a start otherwise cost ~2.5× the CPU:
 * docs/benchmarks.md). Nothing of it reaches the real cache, the metrics or the API server.
 */import { pino } from 'pino';
import type { Config } from '../config/schema.js';
import type { Node, Pod } from '../core/objects/kubeObjects.js';
import { toNodeRecord } from '../core/objects/records.js';
import { filterVerb, type VerbDeps } from '../server/handlers.js';
import { buildExtender } from './extender.js';

/** Candidate nodes per warm-up decision: as many as a 1,000-node cluster sends. */
export const WARM_UP_NODES = 1000;
/** Decisions made by default: past where the measured warm-up ends (~250 calls). */
export const WARM_UP_DECISIONS = 500;

function warmUpNode(i: number): Node {
  return {
    metadata: { name: `warm-up-node-${i}` },
    status: { allocatable: { cpu: '64', memory: '256Gi', pods: '1000', 'ephemeral-storage': '100Gi', 'nvidia.com/gpu': '8' } },
  };
}

function warmUpPod(config: Config, i: number): Pod {
  return {
    metadata: { name: `warm-up-${i}`, namespace: 'warm-up', uid: `warm-up-${i}` },
    spec: { schedulerName: config.schedulerName, containers: [{ name: 'c', resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '250m', memory: '512Mi' } } }] },
    status: { phase: 'Pending' },
  };
}

/**
 * Runs the Filter path `decisions` times on a scratch placement of `config` (see the module header).
 * @returns how long it took (ms) and how many pods it placed.
 */
export function warmUp(config: Config, decisions = WARM_UP_DECISIONS, now: () => number = () => Date.now()): { ms: number; placed: number } {
  const started = performance.now();
  const scratch = buildExtender(config, { clusterMode: false, bindVerb: false });
  const dims = { names: config.dimensions };
  const records = Array.from({ length: WARM_UP_NODES }, (_, i) => toNodeRecord(warmUpNode(i), dims));
  scratch.updates.replaceNodes({ nodes: records, keptNodes: new Set() });
  const names = records.map((r) => r.name);
  const deps: VerbDeps = { service: scratch.service, pausedLabel: config.pausedLabel, metrics: scratch.metrics, logger: pino({ level: 'silent' }), now, onDecision: () => undefined };
  let placed = 0;
  for (let i = 0; i < decisions; i++) {
    // Each request as kube-scheduler sends it, as text: the verbs' own path parses it (JSON.parse) first.
    const body: unknown = JSON.parse(JSON.stringify({ Pod: warmUpPod(config, i), Nodes: null, NodeNames: names }));
    const reply = filterVerb(body, deps);
    if (reply.status === 200 && !reply.body.includes('"NodeNames":[]') && !reply.body.includes('"NodeNames":null')) placed++;
  }
  return { ms: performance.now() - started, placed };
}
