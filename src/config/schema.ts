/**
 * The extender's configuration: one zod schema, with defaults, is the single source of truth. Each
 * default is written once, on its field; a section left out is `.prefault({})`, parsed like an empty
 * section, so its fields' defaults apply.
 * A YAML file is parsed against it at start-up; command-line flags override file values.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { hasAtMostThreeDecimals } from '../core/cache/startingLimit.js';
import { STRATEGIES } from '../core/fit/strategies/index.js';

/** Resource names as Kubernetes spells them: `cpu`, `memory`, `pods`, `ephemeral-storage`, `nvidia.com/gpu`, `hugepages-2Mi`. */
const resourceName = z
  .string()
  .regex(
    /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/,
    'must be a Kubernetes resource name such as cpu, memory or nvidia.com/gpu',
  );

/** A label key: optional DNS prefix and a name, as in `sandbox-extender.io/paused`. */
const labelKey = z
  .string()
  .regex(
    /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
    'must be a Kubernetes label key such as sandbox-extender.io/paused',
  );

/** zod's message for a setting that must be given: "required: WHAT" when it is missing, zod's own otherwise. */
function required(what: string) {
  return (issue: { input: unknown }): string | undefined =>
    issue.input === undefined ? `required: ${what}` : undefined;
}

/** A DNS name (RFC 1123): dot-separated labels of letters, digits and inner hyphens, a trailing dot allowed. */
const HOSTNAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * Why `host` cannot be listened on as written, or null: it must be an IP address (IPv4 dotted quad, or IPv6
 * without brackets, a zone such as `%eth0` allowed) or a hostname (resolved when the server starts). A name whose
 * last label is all digits (`999.1.1.1`, `127.1`) is neither: RFC 1123 keeps such names for addresses.
 * The same rule checks `--host` and `server.host`.
 */
export function listenHostProblem(host: string): string | null {
  if (isIP(host) !== 0) return null;
  const brackets = /^\[(.*)\]$/.exec(host);
  if (brackets && isIP(brackets[1]!) === 6)
    return `must be written without brackets (${brackets[1]}), not ${JSON.stringify(host)}`;
  if (HOSTNAME.test(host) && !/^\d+$/.test(host.replace(/\.$/, '').split('.').at(-1)!)) return null;
  return `must be an IP address (127.0.0.1, 0.0.0.0, ::1, ::) or a hostname (localhost), not ${JSON.stringify(host)}`;
}

export const configSchema = z
  .object({
    /** Placement strategy. */
    strategy: z.enum(STRATEGIES).default('least_loaded'),
    /** Resource dimensions of projected pressure and of the capacity filter. */
    dimensions: z
      .array(resourceName)
      .min(1)
      .refine((names) => new Set(names).size === names.length, 'must not repeat a resource')
      .default(['cpu', 'memory']),
    /** How long a placement stays reserved without the pod being seen bound (placementReservationTtl). */
    placementReservationTtlSeconds: z.number().positive().max(86_400).default(600),
    /**
     * Cluster mode: how long a reservation lives for a pod UID the watch has never shown (a late or
     * forged request); once the watch shows the pod, it gets placementReservationTtlSeconds.
     * Capped at placementReservationTtlSeconds.
     */
    unconfirmedReservationTtlSeconds: z.number().positive().max(86_400).default(30),
    /**
     * One call per pod: Filter answers with the single node it chooses (reserved at once), so
     * kube-scheduler skips Prioritize and its score plugins. Right when the profile's score plugins
     * are off (the sandbox-scheduler setup); set false when other score plugins must weigh in
     * (an extender added to an existing kube-scheduler), and Filter then answers every feasible node.
     */
    chooseInFilter: z.boolean().default(true),
    /** Settings of the kube-scheduler that calls the extender, which the extender cannot read from its requests. */
    kubeScheduler: z
      .object({
        /**
         * Its percentageOfNodesToScore for the extender's pods, 0–100 (the profile's, else the global one; 0 is its
         * adaptive default, what a KubeSchedulerConfiguration that leaves it unset gets). With it the extender tells a
         * window kube-scheduler cut short by sampling from one its own filters narrowed (core/fit/kubeSchedulerSampling.ts),
         * and says so in the placement Event. 100 (the chart's profile): every node is searched, never a sample.
         */
        percentageOfNodesToScore: z.number().int().min(0).max(100).default(100),
      })
      .strict()
      .prefault({}),
    /**
     * Cold-start storms: how many sandboxes a node may be starting at once (src/core/cache/startingLimit.ts).
     * A sandbox counts as starting from the decision (its reservation) until the pod is Ready; a node at
     * its limit fails Filter with a resolvable reason. perCore gives max(1, floor(perCore × allocatable
     * cores)); with both, the smaller applies; a node of unknown capacity gets perNode only. Off by default.
     */
    startingLimit: z
      .object({
        perNode: z.number().int().min(1).optional(),
        perCore: z
          .number()
          .positive()
          .max(1_000_000)
          .refine(hasAtMostThreeDecimals, 'must have at most three decimals (e.g. 0.125)')
          .optional(),
      })
      .strict()
      .default({}),
    /**
     * Template locality (src/core/objects/templateLocality.ts): among the candidates whose projected pressure is
     * within `pressureBand` of the best, a node where the pod's template or images are cached comes
     * first (warm, then partial, then cold), before the starting/running/paused tie-breaks. Read from
     * node.status.images and from a memory of the templates started on each node (key: the pod label
     * `templateLabel`, else its images). least_loaded and most_loaded only. Off by default; the Helm chart
     * turns it on (docs/adr/0009-chart-turns-locality-on-not-the-limit.md).
     */
    locality: z
      .object({
        enabled: z.boolean().default(false),
        /** Absolute projected pressure (0.05 = five points of the busiest resource) above the best that still counts as equal. */
        pressureBand: z.number().min(0).max(1).default(0.05),
        templateLabel: labelKey.default('agents.x-k8s.io/sandbox-template-ref-hash'),
        /** How long a template stays warm on a node after a pod of it was last seen there (E2B keeps 8 h). */
        ttlSeconds: z
          .number()
          .positive()
          .max(7 * 86_400)
          .default(28_800),
        /** (template, node) pairs remembered at most; the least recently seen go first. */
        maxEntries: z.number().int().min(1).max(10_000_000).default(100_000),
        /** Images of node.status.images kept per node, the largest (kubelet's nodeStatusMaxImages default is 50). */
        maxImagesPerNode: z.number().int().min(1).max(1024).default(50),
      })
      .strict()
      .prefault({}),
    /** Pods whose labels carry this key with value "true" are paused sandboxes. */
    pausedLabel: labelKey.default('sandbox-extender.io/paused'),
    /** Only pods with this spec.schedulerName are placed; others are passed through. */
    schedulerName: z.string().min(1).default('sandbox-scheduler'),
    /** Seed of the random strategy (unset: a fresh seed per process). */
    randomSeed: z.number().int().optional(),
    server: z
      .object({
        /** Address to listen on. Loopback by default: the verbs are meant for a kube-scheduler beside the extender. */
        host: z
          .string()
          .superRefine((host, ctx) => {
            const problem = listenHostProblem(host);
            if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
          })
          .default('127.0.0.1'),
        port: z.number().int().min(0).max(65_535).default(8888),
        /** Largest request body accepted; 100 full Node objects are several MB, 5,000 are tens of MB. */
        maxRequestBodyBytes: z
          .number()
          .int()
          .positive()
          .default(64 * 1024 * 1024),
        /** Arrays and objects open at once in a request body, at most (checked as it arrives, before it is parsed). */
        maxRequestDepth: z.number().int().min(1).max(100_000).default(100),
        /** Array elements and object members in a request body, at most (an empty array or object counts one; checked as it arrives). */
        maxRequestElements: z.number().int().min(1).default(4_000_000),
        /** Members of any one object in a request body, at most (Kubernetes maps are small; checked as it arrives). */
        maxObjectMembers: z.number().int().min(1).default(10_000),
        /** Idle keep-alive; above Go's client idle timeout so kube-scheduler never reuses a closed connection. */
        keepAliveTimeoutSeconds: z.number().positive().max(86_400).default(120),
        /**
         * A request (headers and body) not received in full within this time is answered 408 and its
         * connection closed, so a stalled client never holds a connection (kube-scheduler's httpTimeout is
         * seconds).
         */
        requestTimeoutSeconds: z.number().positive().max(3600).default(30),
        /**
         * What is wrong with a request (a refusal at the door, a node named twice) is logged at most once per
         * reason in this window, with the client's address; the next line of a reason counts those left out. 0: every one.
         */
        requestLogWindowSeconds: z.number().min(0).max(86_400).default(60),
        /**
         * HTTPS for a remote extender (the default is plain HTTP on loopback, beside kube-scheduler).
         * With `clientCaFile`, clients must present a certificate signed by it (mTLS; kube-scheduler's
         * extender tlsConfig certFile/keyFile), which is what keeps the bind verb from strangers.
         */
        tls: z
          .object({
            certFile: z
              .string({ error: required("the server certificate's PEM file (server.tls takes certFile and keyFile)") })
              .min(1),
            keyFile: z
              .string({
                error: required("the certificate's private key, a PEM file (server.tls takes certFile and keyFile)"),
              })
              .min(1),
            clientCaFile: z.string().min(1).optional(),
            /** How often the files are checked; a change is loaded for new connections without a restart. */
            reloadIntervalMs: z.number().int().min(50).max(86_400_000).default(10_000),
          })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    /**
     * Cluster mode (used when no snapshot file is given): the kubeconfig to use; unset means
     * $KUBECONFIG, ~/.kube/config, or the in-cluster service account, as kubectl does.
     */
    kubeconfig: z.string().min(1).optional(),
    watch: z
      .object({
        /** Objects per list page. */
        pageSize: z.number().int().min(1).max(10_000).default(500),
        /** Backoff of a failed list/watch session, doubling up to the maximum. */
        minBackoffMs: z.number().int().min(1).max(3_600_000).default(500),
        maxBackoffMs: z.number().int().min(1).max(3_600_000).default(30_000),
        /**
         * A list/watch failing for longer than this makes the cache stale: filter, prioritize and bind
         * refuse (pods wait) and /readyz answers 503 until it recovers. A quiet watch is never failing.
         */
        maxBrokenSeconds: z.number().positive().max(86_400).default(30),
      })
      .strict()
      .refine((w) => w.maxBackoffMs >= w.minBackoffMs, {
        message: 'maxBackoffMs must be ≥ minBackoffMs',
        path: ['maxBackoffMs'],
      })
      .prefault({}),
    events: z
      .object({
        /** Record an Event on the pod for each placement decision (cluster mode). */
        enabled: z.boolean().default(true),
        perSecond: z.number().positive().max(1000).default(20),
        maxQueued: z.number().int().min(1).default(1000),
        /** The same pod, reason and message within this window is recorded once. */
        dedupeWindowSeconds: z.number().min(0).max(86_400).default(600),
      })
      .strict()
      .prefault({}),
    requeue: z
      .object({
        /**
         * Cluster mode: when capacity frees where kube-scheduler cannot see it, ask it to retry the pods
         * this extender rejected for capacity (an update of the requeue object; docs/adr/0006-requeue-nudge.md).
         */
        enabled: z.boolean().default(true),
        /** The requeue object: a CSIStorageCapacity that the installation creates and the extender may patch. */
        namespace: z.string().min(1).default('kube-system'),
        name: z.string().min(1).default('sandbox-extender-requeue'),
        /** Writes of the requeue object per second at most (each one requeues every waiting pod). */
        perSecond: z.number().positive().max(100).default(2),
        /** Rejected pods remembered, the oldest dropped first. */
        maxPods: z.number().int().min(1).max(1_000_000).default(10_000),
        /**
         * A change kube-scheduler saw (a pod deleted) nudges only pods rejected at most this long before the
         * extender applied it: kube-scheduler retried them before the extender's watch caught up.
         */
        raceWindowSeconds: z.number().min(0).max(3600).default(5),
      })
      .strict()
      .prefault({}),
    metrics: z
      .object({
        /** Bound on sandbox_extender_node_pressure_ratio: only the most pressured nodes are exported. */
        maxNodeSeries: z.number().int().min(0).max(10_000).default(500),
      })
      .strict()
      .prefault({}),
    snapshot: z
      .object({
        /** A `kubectl get nodes,pods -A -o json|yaml` List. */
        path: z.string().min(1).optional(),
        /** How often the file is checked for changes. */
        pollIntervalMs: z.number().int().min(50).max(86_400_000).default(1000),
      })
      .strict()
      .prefault({}),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .strict()
  .refine((c) => c.startingLimit.perCore === undefined || c.dimensions.includes('cpu'), {
    message: 'startingLimit.perCore counts cores of allocatable cpu: add cpu to dimensions',
    path: ['startingLimit', 'perCore'],
  })
  .refine((c) => c.kubeconfig === undefined || c.snapshot.path === undefined, {
    message:
      'kubeconfig (cluster mode) and snapshot.path (snapshot mode) pick different modes: set one (a flag counts as setting it)',
    path: ['kubeconfig'],
  });

/**
 * Top-level settings the extender once had, each with why it went and what to do: a file that still sets
 * one is refused with that message (parseConfig), as any other bad setting, rather than run without it.
 */
export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  apiWorker:
    'no longer a setting: the API side (lists, watches, Events, Bindings) always runs on a worker thread; delete this line',
  warmUpDecisions:
    'no longer a setting: the extender no longer warms up before serving (it did not make the first calls after a start faster); delete this line',
};

export type Config = z.infer<typeof configSchema>;
/** What a config file (or a test) may give: every field optional. */
export type ConfigInput = z.input<typeof configSchema>;
