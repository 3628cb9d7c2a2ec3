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
import { addToOfferSet } from './offers.js';
import { inUse, startingCount, type NodeInfo, type OwnReservation } from './nodeInfo.js';
import { pressureRatio } from './pressure.js';
import type { Dimensions } from './records.js';

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
  /** Candidates in this scan. */
  count = 0;
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

  constructor(
    private readonly lookup: (name: string) => NodeInfo | undefined,
    readonly dims: Dimensions,
  ) {}

  /** Scans `names` for a pod requesting `request` (scheduler units per dimension). O(candidates × dimensions). */
  run(request: readonly number[], names: readonly string[], options: ScanOptions = {}): this {
    const n = names.length;
    this.grow(n);
    this.count = n;
    this.names = names;
    this.request = request;
    this.options = options;
    this.localityRanked = false;
    this.infos.length = n;
    const { allocatableOverrides: overrides, own, ignoreCapacity, offered } = options;
    const dimCount = this.dims.names.length;
    let feasible = 0;
    for (let i = 0; i < n; i++) {
      const info = this.lookup(names[i]!);
      this.infos[i] = info;
      if (info !== undefined && offered !== undefined) addToOfferSet(offered, info.id);
      const override = overrides === undefined ? undefined : overrides[i];
      const starting = info === undefined ? 0 : startingCount(info, own);
      this.starting[i] = starting;
      this.running[i] = info === undefined ? 0 : info.running;
      this.paused[i] = info === undefined ? 0 : info.pausedCount;
      if (override === undefined && (info === undefined || !info.hasNode)) {
        this.status[i] = NOT_IN_CACHE;
        this.pressure[i] = NaN;
        continue;
      }
      // The starting limit (evaluation.ts atStartingLimit, inlined): startingCount(info, own) ≥ info.startingLimit.
      const atLimit = info !== undefined && ignoreCapacity !== true && info.startingLimit !== undefined && starting >= info.startingLimit;
      const allocatable = override !== undefined ? override : info!.allocatable;
      if (allocatable === null) {
        this.status[i] = atLimit ? DOES_NOT_FIT : FITS_CAPACITY_UNKNOWN;
        this.pressure[i] = NaN;
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
      this.pressure[i] = pressure;
      this.status[i] = fit === 0 ? FITS : DOES_NOT_FIT;
      if (fit === 0) feasible++;
    }
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

  /** The full evaluation of candidate `i` (allocates; for the few candidates that need words). */
  evaluation(i: number): Evaluation {
    const override = this.options.allocatableOverrides === undefined ? undefined : this.options.allocatableOverrides[i];
    const evaluation = evaluateCandidate(this.names[i]!, this.infos[i], override, this.request, this.options.own, this.dims);
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
