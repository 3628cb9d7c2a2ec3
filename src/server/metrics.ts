/**
 * Prometheus metrics on the extender's own registry (never prom-client's global one, so two
 * instances in one process, e.g. in tests, do not share state). Labels are bounded:
 * `verb` (filter, prioritize, other), `code` (HTTP status), `strategy` (4 values),
 * `result` (placed, no_fit, passthrough, error), `reason` (ReleaseReason), `kind` (node, pod).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ReleaseReason } from '../core/reservations.js';

export type PlacementResult = 'placed' | 'no_fit' | 'passthrough' | 'error';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'verb' | 'code'>;
  readonly requestDuration: Histogram<'verb'>;
  readonly placements: Counter<'strategy' | 'result'>;
  readonly reservationsPending: Gauge;
  readonly reservationsReleased: Counter<'reason'>;
  readonly snapshotLoads: Counter<'result'>;
  readonly snapshotObjects: Gauge<'kind'>;

  /** @param pendingReservations read at scrape time. */
  constructor(pendingReservations: () => number, options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'sandbox_extender_http_requests_total', help: 'Extender HTTP requests by verb and status code.', labelNames: ['verb', 'code'], registers });
    this.requestDuration = new Histogram({
      name: 'sandbox_extender_http_request_duration_seconds',
      help: 'Time to answer an extender HTTP request, by verb.',
      labelNames: ['verb'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.placements = new Counter({ name: 'sandbox_extender_placements_total', help: 'Placement decisions by strategy and result.', labelNames: ['strategy', 'result'], registers });
    this.reservationsPending = new Gauge({
      name: 'sandbox_extender_reservations_pending',
      help: 'Placements reserved and not yet seen bound.',
      registers,
      collect() {
        this.set(pendingReservations());
      },
    });
    this.reservationsReleased = new Counter({ name: 'sandbox_extender_reservations_released_total', help: 'Reservations released, by reason.', labelNames: ['reason'], registers });
    this.snapshotLoads = new Counter({ name: 'sandbox_extender_snapshot_loads_total', help: 'Snapshot file loads by result (ok, error).', labelNames: ['result'], registers });
    this.snapshotObjects = new Gauge({ name: 'sandbox_extender_snapshot_objects', help: 'Objects in the cluster model, by kind.', labelNames: ['kind'], registers });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'sandbox_extender_' });
  }

  released(reason: ReleaseReason, count = 1): void {
    this.reservationsReleased.inc({ reason }, count);
  }
}
