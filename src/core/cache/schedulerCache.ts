/**
 * The scheduler cache: the one owner of the extender's view of the cluster — node capacity, the pods bound to
 * each node (one NodeInfo per node name, nodeInfo.ts) and the reservations (placements decided, not yet seen
 * bound). Shaped like kube-scheduler's cache (Kubernetes v1.36 pkg/scheduler/backend/cache/cache.go: AssumePod,
 * FinishBinding, ForgetPod, AddPod/UpdatePod/RemovePod, cleanupAssumedPods): the informer side (sync.ts
 * CacheUpdates) and the decision side (PlacementService) meet here; everyone else reads SchedulerCacheView.
 * A reservation's states and releases: docs/model.md#a-reservations-life; the capacity it reports freed:
 * docs/cluster-mode.md#what-frees-capacity-and-what-kube-scheduler-sees-of-it.
 */
import type { CacheSize, CapacityFreed, SchedulerCacheView } from './cacheView.js';
import { LocalityIndex, type LocalityIndexOptions, type LocalityView } from '../objects/templateLocality.js';
import type { NodeInfo } from './nodeInfo.js';
import type { Dimensions, NodeRecord, PodRecord } from '../objects/records.js';
import { ReservationLedger, type Release, type ReleaseReason, type Reservation } from './reservations.js';
import { checkStartingLimit, startingLimitOf, type StartingLimitConfig } from './startingLimit.js';

export interface SchedulerCacheOptions {
  /** placementReservationTtl in ms (> 0). */
  readonly ttlMs: number;
  /** Lifetime in ms of a reservation for a pod the cache has never seen (0 < unconfirmedTtlMs ≤ ttlMs); default ttlMs. */
  readonly unconfirmedTtlMs?: number;
  /** How many deleted pod UIDs are remembered, so that a late decision for one is refused (default 10,000). */
  readonly rememberDeletedPods?: number;
  /** Starting sandboxes allowed per node (startingLimit.ts); absent or empty: no limit. */
  readonly startingLimit?: StartingLimitConfig;
  /**
   * Template locality (templateLocality.ts): node images and the memory of templates started; absent: off.
   * `now` (ms) is the clock of the informer side's memory touches (a decision touches at its nowMs).
   */
  readonly locality?: LocalityIndexOptions & { readonly now: () => number };
}

/** The pod of an assume: its UID, `namespace/name`, request vector, current scheduling failure and template key. */
export type AssumedPod = Pick<PodRecord, 'uid' | 'key' | 'request' | 'localityKey'> & {
  readonly schedulingFailure?: string | null;
};

/** What assume did: `assumed`, or why it did not (`bound`: the cache sees the pod bound; `deleted`: seen deleted). */
export type AssumeResult = 'assumed' | 'bound' | 'deleted';

/**
 * Who the cache tells of what happens, fixed when it is made: one listener of each kind (a listener
 * fans out itself if it must). Both run inside informer updates and verbs (expiry), so they must be
 * cheap and must not call back into the cache.
 */
export interface CacheListeners {
  /** Every reservation released, whatever the reason (e.g. to count it). */
  readonly released?: (release: Release) => void;
  /** Capacity freed on a node (docs/cluster-mode.md#what-frees-capacity-and-what-kube-scheduler-sees-of-it), after the change is applied. */
  readonly capacityFreed?: (freed: CapacityFreed) => void;
}

const IGNORE = (): void => {};

interface MutableNodeInfo {
  readonly name: string;
  readonly id: number;
  hasNode: boolean;
  allocatable: readonly number[] | null;
  readonly allocated: number[];
  readonly paused: number[];
  readonly reserved: number[];
  starting: number;
  running: number;
  pausedCount: number;
  reservedCount: number;
  warmPoolSandboxes: number;
  claimedSandboxes: number;
  standaloneSandboxes: number;
  startingLimit: number;
}

export class SchedulerCache implements SchedulerCacheView {
  private readonly infos = new Map<string, MutableNodeInfo>();
  private readonly pods = new Map<string, PodRecord>();
  private readonly ledger = new ReservationLedger();
  /** Deleted pod UIDs, oldest first (bounded). */
  private readonly deleted = new Set<string>();
  private nodeCount = 0;
  private podsVersion = '';
  private nextId = 0;
  private nodeSetChanges = 0;
  private readonly ttlMs: number;
  private readonly unconfirmedTtlMs: number;
  private readonly rememberDeletedPods: number;
  private readonly startingLimit: StartingLimitConfig;
  /** Index of cpu in the dimensions (-1: not tracked, so perCore cannot apply). */
  private readonly cpuIndex: number;

  private readonly onReleased: (release: Release) => void;
  private readonly onCapacityFreed: (freed: CapacityFreed) => void;
  private readonly localityIndex: LocalityIndex | null;
  private readonly now: () => number;

  /** @throws RangeError when a TTL is not positive, unconfirmedTtlMs exceeds ttlMs, or the starting limit is invalid (checkStartingLimit). */
  constructor(
    readonly dims: Dimensions,
    options: SchedulerCacheOptions,
    listeners: CacheListeners = {},
  ) {
    this.onReleased = listeners.released ?? IGNORE;
    this.onCapacityFreed = listeners.capacityFreed ?? IGNORE;
    this.ttlMs = options.ttlMs;
    this.unconfirmedTtlMs = options.unconfirmedTtlMs ?? options.ttlMs;
    this.rememberDeletedPods = options.rememberDeletedPods ?? 10_000;
    this.startingLimit = options.startingLimit ?? {};
    checkStartingLimit(this.startingLimit);
    this.cpuIndex = dims.names.indexOf('cpu');
    this.localityIndex = options.locality ? new LocalityIndex(options.locality) : null;
    this.now = options.locality?.now ?? (() => 0);
    if (!(this.ttlMs > 0)) throw new RangeError(`ttlMs must be > 0, got ${this.ttlMs}`);
    if (!(this.unconfirmedTtlMs > 0 && this.unconfirmedTtlMs <= this.ttlMs)) {
      throw new RangeError(`unconfirmedTtlMs must be > 0 and ≤ ttlMs (${this.ttlMs}), got ${this.unconfirmedTtlMs}`);
    }
  }

  // ------------------------------------------------------------------------------------ queries (SchedulerCacheView)

  /**
   * The resourceVersion of the last pod listing or pod watch event applied (cluster mode; '' before the
   * first): the model holds every pod change the API server made up to it and none after it, so a pod
   * bound at a resourceVersion at or below it was counted by a decision made now. Opaque to the cache;
   * the decisions' debug lines carry it (an over-committed node can be traced to what the extender had
   * seen when it placed a pod there).
   */
  get podsResourceVersion(): string {
    return this.podsVersion;
  }

  /** Counts of Node objects, pod records and reservations held. */
  get size(): CacheSize {
    return { nodes: this.nodeCount, pods: this.pods.size, reservations: this.ledger.size };
  }

  /** Every NodeInfo id is below this bound (ids are dense and never reused). */
  get nodeIdBound(): number {
    return this.nextId;
  }

  /** Changes whenever a NodeInfo is added or dropped (never when one changes in place). */
  get nodeSetVersion(): number {
    return this.nodeSetChanges;
  }

  /** The NodeInfo of `name`, if the cache knows anything of it (a Node object, bound pods or reservations). */
  nodeInfo(name: string): NodeInfo | undefined {
    return this.infos.get(name);
  }

  /** Every NodeInfo, in no particular order. */
  nodeInfos(): IterableIterator<NodeInfo> {
    return this.infos.values();
  }

  /** Whether a Node object named `name` is in the cache. */
  hasNode(name: string): boolean {
    return this.infos.get(name)?.hasNode === true;
  }

  /** Names of the Node objects in the cache. */
  *nodeNames(): IterableIterator<string> {
    for (const info of this.infos.values()) if (info.hasNode) yield info.name;
  }

  pod(uid: string): PodRecord | undefined {
    return this.pods.get(uid);
  }

  podUids(): IterableIterator<string> {
    return this.pods.keys();
  }

  reservation(uid: string): Reservation | undefined {
    return this.ledger.get(uid);
  }

  /** Reservations, oldest write first. */
  reservations(): IterableIterator<Reservation> {
    return this.ledger.all();
  }

  /** Whether the cache saw the pod of `uid` deleted (among the last `rememberDeletedPods` deletions). */
  wasDeleted(uid: string): boolean {
    return this.deleted.has(uid);
  }

  /** Template locality (node images, templates started recently), or null when it is off. */
  get locality(): LocalityView | null {
    return this.localityIndex;
  }

  // -------------------------------------------------------------------------------- informer side

  /** Adds or replaces a Node object's capacity record. */
  upsertNode(record: NodeRecord): void {
    const info = this.infoOf(record.name);
    const added = !info.hasNode;
    const previous = info.allocatable;
    if (added) this.nodeCount++;
    info.hasNode = true;
    info.allocatable = record.allocatable;
    info.startingLimit = this.limitOf(record.allocatable);
    this.localityIndex?.setNodeImages(info.id, record.images);
    if (record.allocatable && (added || grew(previous, record.allocatable)))
      this.onCapacityFreed({ nodeName: record.name, cause: added ? 'node-added' : 'node-grown', podTerminal: false });
  }

  /** Forgets a Node object; pods still bound to it and reservations on it keep counting under its name. */
  deleteNode(name: string): void {
    const info = this.infos.get(name);
    if (!info?.hasNode) return;
    info.hasNode = false;
    info.allocatable = null;
    info.startingLimit = this.limitOf(null);
    this.localityIndex?.clearNodeImages(info.id);
    this.nodeCount--;
    this.dropIfEmpty(info);
  }

  /**
   * Adds or replaces a pod (kube-scheduler's AddPod/UpdatePod). A pod seen bound releases its
   * reservation in the same call (`bound`, or `moved` when it was held on another node), so its
   * requests move from reserved to allocated with neither a gap nor a double count. An unbound pod
   * that shows a scheduling failure other than its reservation's mark and other than its record's
   * before this update releases it (`unschedulable`), unless the bind of the pod has started
   * (startBinding, finishBinding): docs/cluster-mode.md#reservations-in-cluster-mode says why.
   * Any other update leaves the reservation and its deadline as they are, except that a reservation
   * made before the pod was first seen gets its full lifetime (reservedAt + ttl).
   * @returns the release, if any.
   */
  upsertPod(record: PodRecord): Release | null {
    const pod =
      this.localityIndex && record.localityKey
        ? withKey(record, this.localityIndex.intern(record.localityKey))
        : record;
    const previous = this.pods.get(pod.uid);
    if (previous) this.account(previous, -1);
    this.pods.set(pod.uid, pod);
    this.account(pod, +1);
    // A pod bound to a node (whatever its state: a finished one ran there too) shows its template is cached there.
    if (this.localityIndex && pod.localityKey && pod.nodeName) {
      const info = this.infos.get(pod.nodeName);
      if (info) this.localityIndex.touch(pod.localityKey, info.id, this.now());
    }
    if (previous && countsLess(previous, pod))
      this.onCapacityFreed({
        nodeName: previous.nodeName as string,
        cause: onlyStarted(previous, pod) ? 'pod-started' : 'pod-updated',
        podTerminal: previous.terminal,
      });
    const reservation = this.ledger.get(pod.uid);
    if (!reservation) return null;
    if (pod.nodeName) {
      const sameNode = reservation.nodeName === pod.nodeName;
      const release = this.release(reservation, sameNode ? 'bound' : 'moved');
      // Bound where reserved: the requests now count through the pod, unless it counts less than the reservation
      // did (a reservation counts as a starting sandbox: a pod already Ready or paused frees its start slot).
      if (sameNode && countsLess(asStarting(reservation), pod))
        this.onCapacityFreed({ nodeName: pod.nodeName, cause: 'bound', podTerminal: false });
      return release;
    }
    if (newFailure(previous, pod, reservation)) return this.release(reservation, 'unschedulable');
    if (!reservation.podSeen) {
      const expiresAtMs = reservation.bindingStarted ? reservation.expiresAtMs : reservation.reservedAtMs + this.ttlMs;
      this.ledger.put({ ...reservation, podSeen: true, expiresAtMs });
    }
    return null;
  }

  /** The pod changes applied so far are those up to `resourceVersion` (a listing's, or the last watch event's). */
  podsAppliedAt(resourceVersion: string): void {
    this.podsVersion = resourceVersion;
  }

  /** Removes a pod (kube-scheduler's RemovePod) and releases its reservation as `deleted`. Remembers the UID. */
  deletePod(uid: string): Release | null {
    const previous = this.pods.get(uid);
    if (previous) {
      this.account(previous, -1);
      this.pods.delete(uid);
      if (counts(previous))
        this.onCapacityFreed({ nodeName: previous.nodeName, cause: 'pod-deleted', podTerminal: previous.terminal });
    }
    this.deleted.delete(uid);
    this.deleted.add(uid);
    if (this.deleted.size > this.rememberDeletedPods) this.deleted.delete(this.deleted.values().next().value!);
    const reservation = this.ledger.get(uid);
    return reservation ? this.release(reservation, 'deleted') : null;
  }

  // -------------------------------------------------------------------------------- decision side

  /**
   * Reserves `nodeName` for `pod` at `nowMs` (kube-scheduler's AssumePod), replacing the pod's
   * earlier reservation if any. Not done for a pod the cache sees bound (`bound`) or saw deleted
   * (`deleted`). A pod the cache has never seen gets the unconfirmed lifetime.
   */
  assume(pod: AssumedPod, nodeName: string, nowMs: number): AssumeResult {
    const known = this.pods.get(pod.uid);
    if (known?.nodeName) return 'bound';
    if (this.deleted.has(pod.uid)) return 'deleted';
    this.put(
      {
        uid: pod.uid,
        podKey: pod.key,
        nodeName,
        request: [...pod.request],
        reservedAtMs: nowMs,
        expiresAtMs: nowMs + (known ? this.ttlMs : this.unconfirmedTtlMs),
        bindingStarted: false,
        bindingFinished: false,
        podSeen: known !== undefined,
        failureMark: pod.schedulingFailure ?? null,
      },
      'reassumed',
    );
    // The node starts pulling the template now: the next pod of it finds it warm there.
    if (this.localityIndex && pod.localityKey)
      this.localityIndex.touch(pod.localityKey, this.infos.get(nodeName)!.id, nowMs);
    return 'assumed';
  }

  /**
   * The bind verb authorized the pod's Binding to `nodeName` and is about to create it (kube-scheduler's
   * binding cycle reached Bind, so the pod's scheduling cycle passed): its reservation moves to that
   * node, for a full ttl from `nowMs`, and from now on no scheduling failure the watch shows releases it
   * (one shown now is an earlier cycle's: docs/cluster-mode.md#reservations-in-cluster-mode), so the room the bind verb checked stays
   * held until the watch shows the pod bound. When there is no reservation but the cache sees the pod
   * unbound, one is made with the pod's request. Nothing happens for a pod seen bound or not seen at all.
   * A bind that then fails leaves it so: kube-scheduler retries the pod, and that cycle's assume replaces it.
   * @returns whether a reservation is now held for the pod.
   */
  startBinding(uid: string, nodeName: string, nowMs: number): boolean {
    return this.binding(uid, nodeName, nowMs, false);
  }

  /**
   * The pod's Binding to `nodeName` was created (kube-scheduler's FinishBinding): its reservation
   * moves to that node and waits for the watch to show the pod bound, for a full ttl from `nowMs`; as
   * after startBinding, no scheduling failure releases it. When there is no reservation but the cache
   * sees the pod unbound, one is made with the pod's request. Nothing happens for a pod seen bound or
   * not seen at all.
   * @returns whether a reservation is now held for the pod.
   */
  finishBinding(uid: string, nodeName: string, nowMs: number): boolean {
    return this.binding(uid, nodeName, nowMs, true);
  }

  /** Releases the reservation of `uid` as `unreserved` (kube-scheduler's ForgetPod / Unreserve: the decision was not carried out). */
  forget(uid: string): Release | null {
    const reservation = this.ledger.get(uid);
    return reservation ? this.release(reservation, 'unreserved') : null;
  }

  /** Releases every reservation whose deadline is ≤ `nowMs` (as `expired`), earliest first. */
  expire(nowMs: number): Release[] {
    return this.ledger.takeExpired(nowMs).map((reservation) => this.released(reservation, 'expired'));
  }

  // ------------------------------------------------------------------------------------ internals

  /** startBinding (finished false) and finishBinding (finished true). */
  private binding(uid: string, nodeName: string, nowMs: number, finished: boolean): boolean {
    const held = this.ledger.get(uid);
    const known = this.pods.get(uid);
    if (!held && (!known || known.nodeName)) return false;
    this.put(
      {
        uid,
        podKey: held?.podKey ?? known!.key,
        nodeName,
        request: held?.request ?? known!.request,
        reservedAtMs: held?.reservedAtMs ?? nowMs,
        expiresAtMs: nowMs + this.ttlMs,
        bindingStarted: true,
        bindingFinished: finished || held?.bindingFinished === true,
        podSeen: known !== undefined,
        failureMark: held ? held.failureMark : known!.schedulingFailure,
      },
      finished ? 'binding-finished' : 'binding-started',
    );
    return true;
  }

  /** Writes a reservation; `replacedBy`: the transition, named when room frees by replacing the pod's earlier one. */
  private put(reservation: Reservation, replacedBy: 'reassumed' | 'binding-started' | 'binding-finished'): void {
    const previous = this.ledger.put(reservation);
    this.accountReservation(reservation, +1); // before taking the previous one off, so a NodeInfo held by both is never dropped
    if (!previous) return;
    this.accountReservation(previous, -1);
    if (countsLess(asStarting(previous), asStarting(reservation)))
      this.onCapacityFreed({ nodeName: previous.nodeName, cause: replacedBy, podTerminal: false });
  }

  private release(reservation: Reservation, reason: ReleaseReason): Release {
    this.ledger.remove(reservation.uid);
    return this.released(reservation, reason);
  }

  /** Node accounting and notification of a reservation already taken out of the ledger. */
  private released(reservation: Reservation, reason: ReleaseReason): Release {
    this.accountReservation(reservation, -1);
    const release = { reservation, reason };
    this.onReleased(release);
    // Bound: the requests now count through the pod (upsertPod reports what it counts less than the reservation did).
    if (reason !== 'bound') this.onCapacityFreed({ nodeName: reservation.nodeName, cause: reason, podTerminal: false });
    return release;
  }

  /** The starting limit of a node with this allocatable (null: capacity unknown). */
  private limitOf(allocatable: readonly number[] | null): number {
    const milliCpu = allocatable !== null && this.cpuIndex >= 0 ? allocatable[this.cpuIndex]! : null;
    return startingLimitOf(this.startingLimit, milliCpu);
  }

  private infoOf(name: string): MutableNodeInfo {
    let info = this.infos.get(name);
    if (!info) {
      const n = this.dims.names.length;
      info = {
        name,
        id: this.nextId++,
        hasNode: false,
        allocatable: null,
        allocated: new Array<number>(n).fill(0),
        paused: new Array<number>(n).fill(0),
        reserved: new Array<number>(n).fill(0),
        starting: 0,
        running: 0,
        pausedCount: 0,
        reservedCount: 0,
        warmPoolSandboxes: 0,
        claimedSandboxes: 0,
        standaloneSandboxes: 0,
        startingLimit: this.limitOf(null),
      };
      this.infos.set(name, info);
      this.nodeSetChanges++;
    }
    return info;
  }

  /** Drops a NodeInfo that no longer says anything (no Node object, no pods, no reservations). */
  private dropIfEmpty(info: MutableNodeInfo): void {
    if (!info.hasNode && info.starting + info.running + info.pausedCount + info.reservedCount === 0) {
      this.infos.delete(info.name);
      this.nodeSetChanges++;
    }
  }

  private account(pod: PodRecord, sign: 1 | -1): void {
    if (!counts(pod)) return;
    const info = this.infoOf(pod.nodeName);
    const target = pod.state === 'paused' ? info.paused : info.allocated;
    for (let r = 0; r < pod.request.length; r++) target[r]! += sign * pod.request[r]!;
    if (pod.state === 'starting') info.starting += sign;
    else if (pod.state === 'running') info.running += sign;
    else info.pausedCount += sign;
    if (pod.agentSandbox === 'warm-pool') info.warmPoolSandboxes += sign;
    else if (pod.agentSandbox === 'claimed') info.claimedSandboxes += sign;
    else if (pod.agentSandbox === 'standalone') info.standaloneSandboxes += sign;
    if (sign < 0) this.dropIfEmpty(info);
  }

  private accountReservation(reservation: Reservation, sign: 1 | -1): void {
    const info = this.infoOf(reservation.nodeName);
    for (let r = 0; r < reservation.request.length; r++) info.reserved[r]! += sign * reservation.request[r]!;
    info.reservedCount += sign;
    if (sign < 0) this.dropIfEmpty(info);
  }
}

/** The record as the cache keeps it with locality on: its template key the index's one copy, no images. */
function withKey(p: PodRecord, localityKey: string): PodRecord {
  return {
    uid: p.uid,
    key: p.key,
    nodeName: p.nodeName,
    schedulerName: p.schedulerName,
    request: p.request,
    state: p.state,
    terminal: p.terminal,
    schedulingFailure: p.schedulingFailure,
    agentSandbox: p.agentSandbox ?? null,
    localityKey,
  };
}

/**
 * Whether the update of an unbound pod from `previous` to `pod` shows a failure of the cycle that made
 * `reservation`: a scheduling failure other than the reservation's mark, that the record did not carry
 * before this update (an earlier cycle's, delivered again with an unrelated change), while the pod's bind
 * has not started (docs/cluster-mode.md#reservations-in-cluster-mode).
 */
function newFailure(previous: PodRecord | undefined, pod: PodRecord, reservation: Reservation): boolean {
  const failure = pod.schedulingFailure;
  return (
    failure !== null &&
    failure !== reservation.failureMark &&
    failure !== (previous?.schedulingFailure ?? null) &&
    !reservation.bindingStarted
  );
}

/** What countsLess compares: where a pod (or a reservation) counts, in which state, and its requests. */
type Counted = Pick<PodRecord, 'nodeName' | 'state' | 'request'>;

/** A reservation as it counts on its node: a starting sandbox with its requests. */
function asStarting(reservation: Reservation): Counted {
  return { nodeName: reservation.nodeName, state: 'starting', request: reservation.request };
}

/** Whether a pod record counts on its node (bound, and starting, running or paused). */
function counts<T extends Counted>(pod: T): pod is T & { readonly nodeName: string } {
  return pod.nodeName !== null && pod.state !== 'pending' && pod.state !== 'inactive';
}

/**
 * Whether `next` counts less than `previous` on previous's node: not at all, elsewhere, less in some
 * dimension, or no longer starting (a start slot frees for the starting limit, startingLimit.ts).
 */
function countsLess(previous: Counted, next: Counted): boolean {
  if (!counts(previous)) return false;
  if (!counts(next) || next.nodeName !== previous.nodeName) return true;
  if (previous.state === 'starting' && next.state !== 'starting') return true;
  for (let r = 0; r < previous.request.length; r++) if ((next.request[r] ?? 0) < previous.request[r]!) return true;
  return false;
}

/**
 * Whether all `next` frees against `previous` is a start slot: the same node, no dimension smaller, and the pod left
 * the starting state (Ready, or paused). kube-scheduler registers no event for a pod's Ready condition, so this
 * change moves no pod in its queue (rejections.ts seenByScheduler: pod-started).
 */
function onlyStarted(previous: Counted, next: Counted): boolean {
  if (
    !counts(next) ||
    next.nodeName !== previous.nodeName ||
    previous.state !== 'starting' ||
    next.state === 'starting'
  )
    return false;
  for (let r = 0; r < previous.request.length; r++) if ((next.request[r] ?? 0) < previous.request[r]!) return false;
  return true;
}

/** Whether `next` allocates more than `previous` in some dimension (a node with no allocatable before grew if it has one now). */
function grew(previous: readonly number[] | null, next: readonly number[]): boolean {
  if (!previous) return true;
  for (let r = 0; r < next.length; r++) if (next[r]! > (previous[r] ?? 0)) return true;
  return false;
}
