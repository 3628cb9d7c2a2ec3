/**
 * Prometheus metrics on the extender's own registry (never prom-client's global one, so two
 * instances in one process, e.g. in tests, do not share state). Labels are bounded:
 * `verb` (filter, prioritize, bind, other), `code` (HTTP status), `strategy` (4 values),
 * placement `result` (placed, no_fit, passthrough, error), bind `result` (BIND_RESULTS), `locality` (warm, partial, cold),
 * `reason` (ReleaseReason), `kind` (node, pod), `resource` (nodes, pods for watches; a configured dimension for
 * pressure), nudge and requeue-write `result` (requeued, failed). The one per-node series,
 * sandbox_extender_node_pressure_ratio, is bounded by metrics.maxNodeSeries nodes. docs/metrics.md has a row
 * for every metric here (test/docs/metrics.test.ts holds it to this registry).
 */
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SIGNALS } from '../core/objects/templateLocality.js';
import type { ReleaseReason } from '../core/cache/reservations.js';

export type PlacementResult = 'placed' | 'no_fit' | 'passthrough' | 'error';

/** Every ReleaseReason (a record, so that a new reason fails to compile until it is listed). */
const RELEASE_REASONS: Record<ReleaseReason, null> = {
  bound: null,
  moved: null,
  deleted: null,
  unschedulable: null,
  expired: null,
  unreserved: null,
};
/** The result label values of sandbox_extender_binds_total (src/server/handlers.ts: bindVerb). */
const BIND_RESULTS = ['bound', 'already_bound', 'refused', 'does_not_fit', 'error'] as const;

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'verb' | 'code'>;
  readonly requestDuration: Histogram<'verb'>;
  readonly placements: Counter<'strategy' | 'result'>;
  readonly placementsByLocality: Counter<'locality'>;
  readonly sampledWindowPlacements: Counter;
  readonly windowPressureGap: Histogram;
  readonly reservationsPending: Gauge;
  readonly reservationsReleased: Counter<'reason'>;
  readonly snapshotLoads: Counter<'result'>;
  readonly snapshotObjects: Gauge<'kind'>;
  readonly watchRestarts: Counter<'resource'>;
  readonly lists: Counter<'resource' | 'kind'>;
  readonly cacheSynced: Gauge<'resource'>;
  readonly watchLastEventAge: Gauge<'resource'>;
  readonly watchBroken: Gauge<'resource'>;
  readonly binds: Counter<'result'>;
  readonly events: Counter<'outcome'>;
  readonly nodePressure: Gauge<'node' | 'resource'>;
  readonly tlsReloads: Counter<'result'>;
  readonly startingLimitHeld: Counter;
  readonly eventLoopDelay: Histogram;
  readonly podsNudged: Counter<'result'>;
  readonly requeueWrites: Counter<'result'>;
  readonly rejectedPods: Gauge;
  readonly rejectedPodsDropped: Counter;
  readonly duplicateCandidates: Counter<'verb'>;

  /**
   * @param pendingReservations read at scrape time.
   * @param nodePressures read at scrape time: current pressure per node and resource, already cut to
   *   the bounded set of nodes to export (see MetricsSources).
   */
  constructor(
    pendingReservations: () => number,
    options: {
      defaultMetrics?: boolean;
      nodePressures?: () => Iterable<readonly [string, string, number]>;
      /** Node and pod records in the model, read at scrape time. */
      modelSize?: () => { readonly nodes: number; readonly pods: number };
      /** Each watch's freshness (ms), read at scrape time by the two watch gauges (cluster mode; unset: no series). */
      watchHealth?: () => Iterable<{
        readonly resource: string;
        readonly lastDeliveryAgeMs: number;
        readonly brokenMs: number;
      }>;
      /** Pods remembered for a requeue, read at scrape time by sandbox_extender_rejected_pods (unset: 0). */
      rejectedPods?: () => number;
    } = {},
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'sandbox_extender_http_requests_total',
      help: 'Extender HTTP requests by verb and status code.',
      labelNames: ['verb', 'code'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'sandbox_extender_http_request_duration_seconds',
      help: 'Time to answer an extender HTTP request, by verb.',
      labelNames: ['verb'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.placements = new Counter({
      name: 'sandbox_extender_placements_total',
      help: 'Placement decisions by strategy and result.',
      labelNames: ['strategy', 'result'],
      registers,
    });
    this.placementsByLocality = new Counter({
      name: 'sandbox_extender_placements_by_locality_total',
      help: "Placements reserved with locality on, by the pod's signal on the chosen node (warm: its template or every image cached there; partial: some images; cold: none).",
      labelNames: ['locality'],
      registers,
    });
    for (const locality of SIGNALS) this.placementsByLocality.inc({ locality }, 0);
    this.sampledWindowPlacements = new Counter({
      name: 'sandbox_extender_sampled_window_placements_total',
      help:
        'Placements reserved from a window kube-scheduler cut short by sampling: with percentageOfNodesToScore (kubeScheduler.percentageOfNodesToScore) ' +
        'below 100 it offered exactly its cap of feasible nodes, fewer than the cluster holds. A window its own filters narrowed is not counted.',
      registers,
    });
    this.windowPressureGap = new Histogram({
      name: 'sandbox_extender_sampled_window_pressure_gap_ratio',
      help:
        "Placements from a sampled window with a load-aware strategy: how much worse the chosen node's projected pressure is than the best " +
        "node's for the pod in the extender's model, offered or not (0: the chosen node is that best). The best may be a node kube-scheduler's own filters exclude.",
      buckets: [0, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    });
    this.reservationsPending = new Gauge({
      name: 'sandbox_extender_reservations_pending',
      help: 'Placements reserved and not yet seen bound.',
      registers,
      collect() {
        this.set(pendingReservations());
      },
    });
    this.reservationsReleased = new Counter({
      name: 'sandbox_extender_reservations_released_total',
      help: 'Reservations released, by reason.',
      labelNames: ['reason'],
      registers,
    });
    // Every reason and bind result at 0 from the start: a series born at 1 is invisible to rate() and increase(),
    // so the first expired reservation or failed bind after a start would be missed by the alerts.
    for (const reason of Object.keys(RELEASE_REASONS) as ReleaseReason[]) this.reservationsReleased.inc({ reason }, 0);
    this.snapshotLoads = new Counter({
      name: 'sandbox_extender_snapshot_loads_total',
      help: 'Snapshot file loads by result (ok, error).',
      labelNames: ['result'],
      registers,
    });
    const modelSize = options.modelSize;
    this.snapshotObjects = new Gauge({
      name: 'sandbox_extender_snapshot_objects',
      help: 'Node and pod records in the cluster model (from the snapshot file or the watches), by kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        const size = modelSize?.();
        if (!size) return;
        this.set({ kind: 'node' }, size.nodes);
        this.set({ kind: 'pod' }, size.pods);
      },
    });
    this.watchRestarts = new Counter({
      name: 'sandbox_extender_watch_restarts_total',
      help: 'List/watch sessions that failed and were restarted with backoff, by resource.',
      labelNames: ['resource'],
      registers,
    });
    this.lists = new Counter({
      name: 'sandbox_extender_watch_lists_total',
      help: 'Complete lists applied, by resource and kind (initial, relist).',
      labelNames: ['resource', 'kind'],
      registers,
    });
    this.cacheSynced = new Gauge({
      name: 'sandbox_extender_cache_synced',
      help: '1 once the initial list of the resource has been applied.',
      labelNames: ['resource'],
      registers,
    });
    const watchHealth = options.watchHealth ?? (() => []);
    this.watchLastEventAge = new Gauge({
      name: 'sandbox_extender_watch_last_event_age_seconds',
      help: 'Seconds since the watch of the resource last delivered an event or bookmark, or its list completed (a quiet cluster still gets a bookmark about once a minute).',
      labelNames: ['resource'],
      registers,
      collect() {
        for (const h of watchHealth()) this.set({ resource: h.resource }, h.lastDeliveryAgeMs / 1000);
      },
    });
    this.watchBroken = new Gauge({
      name: 'sandbox_extender_watch_broken_seconds',
      help: 'Seconds the list/watch of the resource has been failing (0 when it is not); above watch.maxBrokenSeconds the verbs refuse.',
      labelNames: ['resource'],
      registers,
      collect() {
        for (const h of watchHealth()) this.set({ resource: h.resource }, h.brokenMs / 1000);
      },
    });
    this.binds = new Counter({
      name: 'sandbox_extender_binds_total',
      help: 'Bind verb calls by result (bound, already_bound, refused: not what kube-scheduler was offered, does_not_fit: the node filled since the decision, error).',
      labelNames: ['result'],
      registers,
    });
    for (const result of BIND_RESULTS) this.binds.inc({ result }, 0);
    this.events = new Counter({
      name: 'sandbox_extender_events_total',
      help: 'Pod events by outcome (recorded, deduplicated, dropped, failed).',
      labelNames: ['outcome'],
      registers,
    });
    const nodePressures = options.nodePressures;
    this.nodePressure = new Gauge({
      name: 'sandbox_extender_node_pressure_ratio',
      help: 'Current pressure (allocated + paused + reserved) / allocatable per node and resource, for at most metrics.maxNodeSeries nodes (the most pressured).',
      labelNames: ['node', 'resource'],
      registers,
      collect() {
        this.reset();
        for (const [node, resource, value] of nodePressures?.() ?? []) this.set({ node, resource }, value);
      },
    });
    this.tlsReloads = new Counter({
      name: 'sandbox_extender_tls_reloads_total',
      help: 'Reloads of the serving certificate after its files changed, by result (ok, error).',
      labelNames: ['result'],
      registers,
    });
    this.eventLoopDelay = new Histogram({
      name: 'sandbox_extender_event_loop_delay_seconds',
      help: 'How late a timer due every 20 ms fired: time the event loop was busy when a request could have been waiting (see startEventLoopSampler).',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.startingLimitHeld = new Counter({
      name: 'sandbox_extender_starting_limit_held_total',
      help:
        'Filter calls for own pods that placed the pod nowhere while the starting limit excluded at least one node that would otherwise fit ' +
        '(its only failure was the limit). A waiting pod counts once per Filter call, so each retry counts again.',
      registers,
    });
    this.podsNudged = new Counter({
      name: 'sandbox_extender_pods_nudged_total',
      help: 'Pods rejected for capacity that the extender asked kube-scheduler to retry after capacity freed, by result (requeued, failed).',
      labelNames: ['result'],
      registers,
    });
    for (const result of ['requeued', 'failed']) this.podsNudged.inc({ result }, 0);
    this.requeueWrites = new Counter({
      name: 'sandbox_extender_requeue_writes_total',
      help: 'Writes of the requeue object (each retries every pod an extender rejected), by result (requeued, failed); at most requeue.perSecond per second.',
      labelNames: ['result'],
      registers,
    });
    for (const result of ['requeued', 'failed']) this.requeueWrites.inc({ result }, 0);
    const remembered = options.rejectedPods ?? (() => 0);
    this.rejectedPods = new Gauge({
      name: 'sandbox_extender_rejected_pods',
      help: 'Pods this extender rejected for capacity that it remembers, to requeue them when capacity frees (at most requeue.maxPods).',
      registers,
      collect() {
        this.set(remembered());
      },
    });
    this.rejectedPodsDropped = new Counter({
      name: 'sandbox_extender_rejected_pods_dropped_total',
      help: 'Rejected pods forgotten to stay within requeue.maxPods, the oldest rejection first: freed capacity nudges none of them until a Filter rejects it again.',
      registers,
    });
    this.duplicateCandidates = new Counter({
      name: 'sandbox_extender_duplicate_candidates_total',
      help: 'Candidate nodes a Filter or Prioritize request named more than once (kube-scheduler never repeats one), by verb; each node is answered once.',
      labelNames: ['verb'],
      registers,
    });
    for (const verb of ['filter', 'prioritize']) this.duplicateCandidates.inc({ verb }, 0);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'sandbox_extender_' });
  }

  released(reason: ReleaseReason, count = 1): void {
    this.reservationsReleased.inc({ reason }, count);
  }
}

/** How often the event-loop sampler wakes (ms). */
export const EVENT_LOOP_SAMPLE_MS = 20;

/**
 * Feeds sandbox_extender_event_loop_delay_seconds: a timer due every EVENT_LOOP_SAMPLE_MS records how
 * late it fired. A request that arrives while the loop is busy waits about that long before any handler
 * (and the request-duration histogram, which starts in the first middleware) sees it. The timer does not
 * keep the process alive. @returns a function that stops it.
 */
export function startEventLoopSampler(metrics: Metrics, now: () => number = () => performance.now()): () => void {
  let due = now() + EVENT_LOOP_SAMPLE_MS;
  const timer = setInterval(() => {
    const at = now();
    metrics.eventLoopDelay.observe(Math.max(0, at - due) / 1000);
    due = at + EVENT_LOOP_SAMPLE_MS;
  }, EVENT_LOOP_SAMPLE_MS);
  timer.unref();
  return () => clearInterval(timer);
}
