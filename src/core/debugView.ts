/**
 * The debug view of the model: each node's snapshot with its reservations, as plain sorted data
 * (GET /debug/nodes and /debug/nodes/NAME), and the current pressure per node for the metrics.
 * Read-only: it copies what it shows.
 */
import type { ClusterModel } from './clusterModel.js';

export type PerResource = Record<string, number>;

export interface ReservationView {
  readonly uid: string;
  readonly pod: string;
  readonly request: PerResource;
  readonly ageSeconds: number;
}

export interface NodeView {
  readonly name: string;
  /** null: the node's capacity is unknown (or the node is not in the model but holds pods/reservations). */
  readonly allocatable: PerResource | null;
  readonly allocated: PerResource;
  readonly paused: PerResource;
  readonly reserved: PerResource;
  /** (allocated + paused + reserved) / allocatable per resource; absent where allocatable is 0 or unknown. */
  readonly pressure: PerResource;
  readonly maxPressure: number | null;
  readonly sandboxes: { readonly starting: number; readonly running: number; readonly paused: number; readonly reserved: number };
  readonly reservations: readonly ReservationView[];
}

function perResource(names: readonly string[], values: readonly number[]): PerResource {
  return Object.fromEntries(names.map((n, i) => [n, values[i]!]));
}

/** Current pressure of a node per dimension (NaN where allocatable is 0 or unknown). */
export function currentPressure(model: ClusterModel, name: string): number[] {
  const allocatable = model.nodes.get(name)?.allocatable ?? null;
  const totals = model.totalsOf(name);
  const reserved = model.ledger.reservedOn(name);
  return model.dims.names.map((_, r) => {
    const a = allocatable?.[r] ?? 0;
    return a > 0 ? (totals.allocated[r]! + totals.paused[r]! + reserved.request[r]!) / a : NaN;
  });
}

/** Reservations grouped by node (only the node `only`, when given). */
function reservationsByNode(model: ClusterModel, nowMs: number, only?: string): Map<string, ReservationView[]> {
  const byNode = new Map<string, ReservationView[]>();
  for (const r of model.ledger.all()) {
    if (only !== undefined && r.nodeName !== only) continue;
    const list = byNode.get(r.nodeName) ?? [];
    list.push({ uid: r.uid, pod: r.podKey, request: perResource(model.dims.names, r.request), ageSeconds: Math.max(0, (nowMs - r.reservedAtMs) / 1000) });
    byNode.set(r.nodeName, list);
  }
  return byNode;
}

/** Every node the model knows, or holds reservations for, sorted by name. */
export function debugNodes(model: ClusterModel, nowMs: number): NodeView[] {
  const byNode = reservationsByNode(model, nowMs);
  const names = new Set([...model.nodes.keys(), ...byNode.keys()]);
  return [...names].sort().map((name) => nodeView(model, name, byNode.get(name) ?? []));
}

/** One node's view, or null if the model knows nothing of it (no record, no reservation). */
export function debugNode(model: ClusterModel, name: string, nowMs: number): NodeView | null {
  const reservations = reservationsByNode(model, nowMs, name).get(name) ?? [];
  if (!model.nodes.has(name) && reservations.length === 0) return null;
  return nodeView(model, name, reservations);
}

function nodeView(model: ClusterModel, name: string, reservations: ReservationView[]): NodeView {
  const dims = model.dims.names;
  const allocatable = model.nodes.get(name)?.allocatable ?? null;
  const totals = model.totalsOf(name);
  const reserved = model.ledger.reservedOn(name);
  const pressure = currentPressure(model, name);
  const known = pressure.filter((p) => !Number.isNaN(p));
  return {
    name,
    allocatable: allocatable && perResource(dims, allocatable),
    allocated: perResource(dims, totals.allocated),
    paused: perResource(dims, totals.paused),
    reserved: perResource(dims, reserved.request),
    pressure: Object.fromEntries(dims.map((d, i) => [d, pressure[i]!]).filter(([, p]) => !Number.isNaN(p))),
    maxPressure: known.length > 0 ? Math.max(...known) : null,
    sandboxes: { starting: totals.starting, running: totals.running, paused: totals.pausedCount, reserved: reserved.count },
    reservations: [...reservations].sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0)),
  };
}
