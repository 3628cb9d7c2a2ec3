/**
 * The hand check of a request's Pod (src/server/wire.ts podLooksValid) against the zod schema it
 * stands in for: on valid pods and on pods with one field replaced by any JSON value (fast-check), the
 * two give the same verdict — above all, the hand check never accepts what zod refuses.
 */
import fc from 'fast-check';
import {
  MAX_CANDIDATES,
  MAX_NAME_LENGTH,
  MAX_NAMESPACE_LENGTH,
  MAX_UID_LENGTH,
  parseExtenderArgs,
  podLooksValid,
  podSchemaAccepts,
} from '../../src/server/wire.js';
import { makePod } from '../fixtures/builders.js';

const base = () =>
  structuredClone({
    ...makePod('p').uid('u-1').req({ cpu: '1', memory: '1Gi' }).obj(),
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'm' }],
      containerStatuses: [{ name: 'c', resources: { requests: { cpu: '1' } }, allocatedResources: { cpu: '1' } }],
      initContainerStatuses: [],
      resources: { requests: {} },
      allocatedResources: {},
    },
  }) as unknown as Record<string, unknown>;

/** Every place a field the schema checks can sit, as a path from the pod. */
const PATHS: readonly (readonly (string | number)[])[] = [
  [],
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'namespace'],
  ['metadata', 'uid'],
  ['metadata', 'labels'],
  ['metadata', 'labels', 'app'],
  ['spec'],
  ['spec', 'nodeName'],
  ['spec', 'schedulerName'],
  ['spec', 'containers'],
  ['spec', 'containers', 0],
  ['spec', 'containers', 0, 'name'],
  ['spec', 'containers', 0, 'resources'],
  ['spec', 'containers', 0, 'resources', 'requests'],
  ['spec', 'containers', 0, 'resources', 'limits'],
  ['spec', 'containers', 0, 'restartPolicy'],
  ['spec', 'initContainers'],
  ['spec', 'overhead'],
  ['spec', 'resources'],
  ['status'],
  ['status', 'phase'],
  ['status', 'conditions'],
  ['status', 'conditions', 0],
  ['status', 'conditions', 0, 'type'],
  ['status', 'conditions', 0, 'message'],
  ['status', 'containerStatuses'],
  ['status', 'containerStatuses', 0, 'name'],
  ['status', 'containerStatuses', 0, 'allocatedResources'],
  ['status', 'initContainerStatuses'],
  ['status', 'resources'],
  ['status', 'allocatedResources'],
];

function setAt(target: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  if (typeof target !== 'object' || target === null) return target; // the whole pod was replaced first
  let node = target as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null)
      node[key] = typeof path[path.indexOf(key) + 1] === 'number' ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return target;
}

const lengths = [
  0,
  1,
  MAX_NAMESPACE_LENGTH,
  MAX_NAMESPACE_LENGTH + 1,
  MAX_UID_LENGTH,
  MAX_UID_LENGTH + 1,
  MAX_NAME_LENGTH,
  MAX_NAME_LENGTH + 1,
];
const value = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.jsonValue(),
  fc.constantFrom(...lengths).map((n) => 'x'.repeat(n)),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
);

describe('podLooksValid agrees with the Pod schema', () => {
  it('accepts a full valid pod, as zod does', () => {
    expect(podSchemaAccepts(base())).toBe(true);
    expect(podLooksValid(base())).toBe(true);
  });

  it('on a pod with one checked field replaced by any JSON value, gives zod’s verdict', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PATHS), value, (path, v) => {
        const candidate = setAt(base(), path, v);
        expect(podLooksValid(candidate)).toBe(podSchemaAccepts(candidate));
      }),
      { numRuns: 3000 },
    );
  });

  it('on two fields replaced at once too', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PATHS), value, fc.constantFrom(...PATHS), value, (p1, v1, p2, v2) => {
        const candidate = setAt(setAt(base(), p1, v1), p2, v2);
        expect(podLooksValid(candidate)).toBe(podSchemaAccepts(candidate));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the number of candidates one request may carry', () => {
  const pod = makePod('p').req({ cpu: '1', memory: '1Gi' }).obj();
  const names = (n: number) => Array.from({ length: n }, (_, i) => `node-${i}`);

  it(`accepts ${MAX_CANDIDATES} node names and refuses one more, by count, before any per-node check`, () => {
    expect(parseExtenderArgs({ Pod: pod, NodeNames: names(MAX_CANDIDATES) }).NodeNames).toHaveLength(MAX_CANDIDATES);
    expect(() => parseExtenderArgs({ Pod: pod, NodeNames: names(MAX_CANDIDATES + 1) })).toThrow(
      `NodeNames: ${MAX_CANDIDATES + 1} candidates, more than the ${MAX_CANDIDATES} one request may carry`,
    );
  });

  it('refuses as many Node objects the same way', () => {
    const items = names(MAX_CANDIDATES + 1).map((name) => ({ metadata: { name } }));
    expect(() => parseExtenderArgs({ Pod: pod, Nodes: { items } })).toThrow(
      `Nodes.items: ${MAX_CANDIDATES + 1} candidates`,
    );
  });
});

describe('an error names at most 20 problems', () => {
  it('10,000 null containers: the first 20 paths, then how many more', () => {
    const pod = makePod('p').req({ cpu: '1' }).obj();
    const bad = { ...pod, spec: { ...pod.spec, containers: Array.from({ length: 10_000 }, () => null) } };
    let message = '';
    try {
      parseExtenderArgs({ Pod: bad, NodeNames: ['n1'] });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.split('; ')).toHaveLength(21);
    expect(message).toContain('Pod.spec.containers.0: ');
    expect(message).toContain('Pod.spec.containers.19: ');
    expect(message).not.toContain('Pod.spec.containers.20: ');
    expect(message.endsWith('and 9980 more problems')).toBe(true);
  });
});
