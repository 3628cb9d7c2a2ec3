/**
 * The candidate scan: one pass over the nodes kube-scheduler offers for a pod, into reused typed
 * arrays (fit status, projected pressure, sandbox counts), with no per-candidate allocation. This is
 * the hot path of every Filter and Prioritize call (5,000 candidates at Kubernetes' limits); the
 * formula and fit rule are evaluation.ts's, applied in place. Strategies choose from these arrays,
 * and full Evaluations are built afterwards only for the few nodes that need words (the chosen node,
 * the runner-up, nodes that fail).
 *
 * A scan is reused from call to call: its contents are valid until the next `run`.
 */
import { dimensionFit, evaluateCandidate, type Evaluation } from './evaluation.js';
import { CandidateLookup } from '../cache/candidateLookup.js';
import { addToOfferSet } from './offers.js';
import { inUse, startingCount, type NodeInfo, type OwnReservation } from '../cache/nodeInfo.js';
import { pressureRatio } from '../objects/pressure.js';
import type { Dimensions } from '../objects/records.js';

/** Fit status of a candidate. */
export const FITS = 0;
/** Fits because its capacity is unknown (ranked after every node of known capacity). */
export const FITS_CAPACITY_UNKNOWN = 1;
/** Fails the fit rule: a requested dimension is full, or the node is at its starting limit (whatever its capacity). */
export const DOES_NOT_FIT = 2;
/** Neither in the cache nor given as a Node object: reported, not guessed at. */
export const NOT_IN_CACHE = 3;

export interface ScanOptions {
  /** Allocatable from Node objects in the request, per candidate (null: object without usable allocatable; undefined: the cache's). */
  readonly allocatableOverrides?: readonly (readonly number[] | null | undefined)[] | undefined;
  /** The pod's own reservation, left out of its node. */
  readonly own?: OwnReservation | undefined;
  /** Skip the capacity filter and the starting limit (the overcommit replay only). */
  readonly ignoreCapacity?: boolean;
  /** Set the bit of each candidate's NodeInfo id here (the candidates kube-scheduler offered). */
  readonly offered?: Uint32Array | undefined;
}

export class CandidateScan {
  /** Candidates in this scan (each name once). */
  count = 0;
  /** Names the last run dropped because they were given before in the same list. */
  duplicates = 0;
  /** Candidates that fit (FITS or FITS_CAPACITY_UNKNOWN). */
  feasible = 0;
  names: readonly string[] = [];
  request: readonly number[] = [];
  status = new Uint8Array(16);
  /** max_r projected_r for candidates of known capacity; NaN otherwise. */
  pressure = new Float64Array(16);
  starting = new Int32Array(16);
  running = new Int32Array(16);
  paused = new Int32Array(16);
  /** Scratch space of the strategies (e.g. the indices of exact ties). */
  scratch = new Int32Array(16);
  /**
   * Set by {@link rankByLocality} for this run only: per candidate 0 outside the pressure band (or of
   * unknown capacity, or not feasible), else 1 + its locality signal (cold 1, partial 2, warm 3).
   */
  localityRank = new Uint8Array(16);
  /** Whether rankByLocality ran on this run (the load-aware strategies then compare localityRank first). */
  localityRanked = false;
  /** With localityRanked: the best projected pressure among the feasible candidates (the band's edge). */
  bandBest = NaN;
  /** With localityRanked: how many candidates are in the band. */
  inBand = 0;
  private infos: (NodeInfo | undefined)[] = [];
  private options: ScanOptions = {};
  /** The allocatable overrides of `names` (the options', or a copy without the dropped repeats). */
  private overrides: ScanOptions['allocatableOverrides'] = undefined;
  private readonly seen = new SeenNodes();
  private readonly lookup: CandidateLookup;

  /**
   * @param lookup the NodeInfo of a name (the cache's nodeInfo).
   * @param version the cache's nodeSetVersion: given, each list is resolved with the help of the last one
   *   (candidateLookup.ts); absent, every name is looked up.
   */
  constructor(
    lookup: (name: string) => NodeInfo | undefined,
    readonly dims: Dimensions,
    version: () => number = () => NaN,
  ) {
    this.lookup = new CandidateLookup(lookup, version);
  }

  /**
   * Scans `names` for a pod requesting `request` (scheduler units per dimension). O(candidates × dimensions).
   * A name given again is dropped (kube-scheduler never repeats one; answering it twice would repeat it in the
   * reply): the scan holds each candidate once, in the order of its first appearance, `duplicates` counts the
   * dropped ones, and `names` (and the allocatable overrides) are then a new list without them. No allocation when
   * there is no repeat: a name is known again by its NodeInfo id, already looked up for the scan.
   */
  run(request: readonly number[], names: readonly string[], options: ScanOptions = {}): this {
    const n = names.length;
    this.grow(n);
    this.request = request;
    this.options = options;
    this.localityRanked = false;
    this.infos.length = n;
    const { allocatableOverrides: overrides, own, ignoreCapacity, offered } = options;
    const dimCount = this.dims.names.length;
    const seen = this.seen;
    seen.reset();
    let unique: string[] | null = null;
    let uniqueOverrides: (readonly number[] | null | undefined)[] | null = null;
    let count = 0;
    let feasible = 0;
    const lookup = this.lookup;
    lookup.begin();
    for (let i = 0; i < n; i++) {
      const name = names[i]!;
      const info = lookup.next(name);
      if (seen.repeat(name, info)) {
        if (unique === null) {
          unique = names.slice(0, i);
          if (overrides !== undefined) uniqueOverrides = overrides.slice(0, i);
        }
        continue;
      }
      const override = overrides === undefined ? undefined : overrides[i];
      if (unique !== null) {
        unique.push(name);
        if (uniqueOverrides !== null) uniqueOverrides.push(override);
      }
      const k = count++;
      this.infos[k] = info;
      if (info !== undefined && offered !== undefined) addToOfferSet(offered, info.id);
      const starting = info === undefined ? 0 : startingCount(info, own);
      this.starting[k] = starting;
      this.running[k] = info === undefined ? 0 : info.running;
      this.paused[k] = info === undefined ? 0 : info.pausedCount;
      if (override === undefined && (info === undefined || !info.hasNode)) {
        this.status[k] = NOT_IN_CACHE;
        this.pressure[k] = NaN;
        continue;
      }
      // The starting limit (evaluation.ts atStartingLimit, inlined): startingCount(info, own) ≥ info.startingLimit.
      const atLimit =
        info !== undefined &&
        ignoreCapacity !== true &&
        info.startingLimit !== undefined &&
        starting >= info.startingLimit;
      const allocatable = override !== undefined ? override : info!.allocatable;
      if (allocatable === null) {
        this.status[k] = atLimit ? DOES_NOT_FIT : FITS_CAPACITY_UNKNOWN;
        this.pressure[k] = NaN;
        if (!atLimit) feasible++;
        continue;
      }
      let pressure = 0;
      let fit = atLimit ? 1 : 0;
      for (let r = 0; r < dimCount; r++) {
        const a = allocatable[r]!;
        const total = (info === undefined ? 0 : inUse(info, r, own)) + request[r]!;
        const p = pressureRatio(total, a);
        if (p > pressure) pressure = p;
        if (fit === 0 && ignoreCapacity !== true) fit = dimensionFit(request[r]!, total, a);
      }
      this.pressure[k] = pressure;
      this.status[k] = fit === 0 ? FITS : DOES_NOT_FIT;
      if (fit === 0) feasible++;
    }
    lookup.end();
    this.count = count;
    this.infos.length = count;
    this.duplicates = n - count;
    this.names = unique ?? names;
    this.overrides = uniqueOverrides ?? overrides;
    this.feasible = feasible;
    return this;
  }

  fits(i: number): boolean {
    return this.status[i]! <= FITS_CAPACITY_UNKNOWN;
  }

  /** The NodeInfo id of candidate `i`, or -1 when the cache does not know the name. */
  nodeId(i: number): number {
    return this.infos[i]?.id ?? -1;
  }

  /** Whether candidate `i` has a pressure: its capacity is known (a node at its starting limit may have either). */
  capacityKnown(i: number): boolean {
    return !Number.isNaN(this.pressure[i]!);
  }

  /**
   * Marks the locality rank of every feasible candidate of known capacity whose projected pressure
   * is within `band` of the best (the lowest when `sign` is +1, the highest when −1): 1 + `signal`
   * of its NodeInfo id (a candidate not in the cache is cold). `anyKnown` false (no node can be
   * anything but cold) marks every one cold without asking. A pressure p is in the band when
   * sign × (p − best) ≤ band + 1e-9 (the margin absorbs floating-point error; one millicore on a
   * 1,000-core node is 1e-6). O(candidates × pod images).
   * @returns how many candidates are in the band.
   */
  rankByLocality(signal: (nodeId: number) => number, anyKnown: boolean, band: number, sign: 1 | -1): number {
    let best = NaN;
    for (let i = 0; i < this.count; i++) {
      const p = this.pressure[i]!;
      if (this.status[i] === FITS && (Number.isNaN(best) || sign * (p - best) < 0)) best = p;
    }
    this.bandBest = best;
    this.localityRanked = true;
    const rank = this.localityRank;
    const edge = band + 1e-9;
    let inBand = 0;
    for (let i = 0; i < this.count; i++) {
      if (this.status[i] !== FITS || !(sign * (this.pressure[i]! - best) <= edge)) {
        rank[i] = 0;
        continue;
      }
      inBand++;
      const info = this.infos[i];
      rank[i] = 1 + (anyKnown && info !== undefined ? signal(info.id) : 0);
    }
    this.inBand = inBand;
    return inBand;
  }

  /**
   * The best node for this run's pod among `nodes` (the cache's NodeInfos) that this run was not given: of
   * known capacity, fitting by the fit rule and starting limit of `run` (fittingPressure), with the best
   * projected pressure (the lowest when `sign` is +1, the highest when −1; the first met among equals).
   * A node the run was given is skipped (its figures are in the scan), and so is one of unknown capacity.
   * O(nodes × dimensions), nothing allocated per node; meant only for a window kube-scheduler cut short
   * (placementService.ts DecisionWindow). Not for a run with ignoreCapacity.
   * @returns that node and its projected pressure, or null when none of them fits.
   */
  bestNotOffered(
    nodes: Iterable<NodeInfo>,
    sign: 1 | -1,
  ): { readonly info: NodeInfo; readonly pressure: number } | null {
    const { request, seen } = this;
    const own = this.options.own;
    let best: NodeInfo | null = null;
    let bestPressure = NaN;
    for (const info of nodes) {
      if (info.allocatable === null || seen.has(info.id)) continue;
      const p = fittingPressure(info, request, own);
      if (Number.isNaN(p)) continue;
      if (best === null || sign * (p - bestPressure) < 0) {
        best = info;
        bestPressure = p;
      }
    }
    return best === null ? null : { info: best, pressure: bestPressure };
  }

  /** The full evaluation of candidate `i` (allocates; for the few candidates that need words). */
  evaluation(i: number): Evaluation {
    const override = this.overrides === undefined ? undefined : this.overrides[i];
    const evaluation = evaluateCandidate(
      this.names[i]!,
      this.infos[i],
      override,
      this.request,
      this.options.own,
      this.dims,
    );
    return this.options.ignoreCapacity === true ? { ...evaluation, failures: [] } : evaluation;
  }

  private grow(n: number): void {
    if (n <= this.status.length) return;
    const size = Math.max(n, 2 * this.status.length);
    this.status = new Uint8Array(size);
    this.pressure = new Float64Array(size);
    this.starting = new Int32Array(size);
    this.running = new Int32Array(size);
    this.paused = new Int32Array(size);
    this.scratch = new Int32Array(size);
    this.localityRank = new Uint8Array(size);
  }
}

/**
 * The projected pressure of a pod requesting `request` on the cache's node `info` when the pod fits there, else
 * NaN: the formula and fit rule of evaluation.ts with the starting limit, as CandidateScan.run applies them to a
 * candidate without a Node object in the request (NaN too when the node's capacity is unknown). O(dimensions),
 * no allocation.
 * @param own the pod's own reservation, left out of its node.
 */
export function fittingPressure(info: NodeInfo, request: readonly number[], own: OwnReservation | undefined): number {
  const allocatable = info.allocatable;
  if (allocatable === null || (info.startingLimit !== undefined && startingCount(info, own) >= info.startingLimit))
    return NaN;
  let pressure = 0;
  for (let r = 0; r < allocatable.length; r++) {
    const a = allocatable[r]!;
    const total = inUse(info, r, own) + request[r]!;
    if (dimensionFit(request[r]!, total, a) !== 0) return NaN;
    const p = pressureRatio(total, a);
    if (p > pressure) pressure = p;
  }
  return pressure;
}

/**
 * The names a list has given so far, to drop a repeat: one stamp per NodeInfo id in a reused array (nothing is
 * allocated per list), and a set only for names the cache has no NodeInfo for (made at the first of those).
 */
export class SeenNodes {
  private stamps = new Uint32Array(16);
  private generation = 0;
  private unknown: Set<string> | null = null;

  /** Starts a new list: nothing seen. */
  reset(): void {
    if (++this.generation === 0xffffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
    this.unknown = null;
  }

  /** Whether the NodeInfo of `id` was seen since reset (does not mark it). */
  has(id: number): boolean {
    return id < this.stamps.length && this.stamps[id] === this.generation;
  }

  /** Whether `name` (`info`: its NodeInfo, or undefined when the cache has none) was seen since reset; marks it seen. */
  repeat(name: string, info: NodeInfo | undefined): boolean {
    if (info === undefined) {
      const unknown = (this.unknown ??= new Set());
      if (unknown.has(name)) return true;
      unknown.add(name);
      return false;
    }
    const id = info.id;
    if (id >= this.stamps.length) {
      const grown = new Uint32Array(Math.max(id + 1, 2 * this.stamps.length));
      grown.set(this.stamps);
      this.stamps = grown;
    }
    if (this.stamps[id] === this.generation) return true;
    this.stamps[id] = this.generation;
    return false;
  }
}
