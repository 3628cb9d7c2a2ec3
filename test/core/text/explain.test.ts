/**
 * What the explanations say of a pod ranked as requesting nothing (core/text/explain.ts zeroRequestNote): a pod
 * with no containers, or with containers that request nothing of the dimensions, is said to be ranked as
 * zero requests, in the placement and no-fit messages; a pod that requests anything of a dimension is not.
 */
import type { Evaluation } from '../../../src/core/fit/evaluation.js';
import { explainNoFit, explainPlacement, zeroRequestNote } from '../../../src/core/text/explain.js';
import type { Pod } from '../../../src/core/objects/kubeObjects.js';
import { toPodRecord, type Dimensions } from '../../../src/core/objects/records.js';
import { makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const PAUSED = 'sandbox-extender.io/paused';
/** The note as the verbs compute it: from the pod's record (its request over DIMS). */
const noteOf = (pod: Pod, dims: Dimensions = DIMS) =>
  zeroRequestNote(pod, toPodRecord(pod, dims, { pausedLabel: PAUSED }).request, dims);

describe('zeroRequestNote', () => {
  it('a pod with an empty containers list, or none at all, has no containers', () => {
    const empty = makePod('empty').obj();
    expect(empty.spec!.containers).toEqual([]);
    expect(noteOf(empty)).toBe('the pod has no containers: ranked as zero requests');
    expect(noteOf({ ...empty, spec: { schedulerName: 'sandbox-scheduler' } })).toBe(
      'the pod has no containers: ranked as zero requests',
    );
    expect(noteOf({ ...empty, spec: { ...empty.spec, containers: null } })).toBe(
      'the pod has no containers: ranked as zero requests',
    );
  });

  it('containers without requests (a BestEffort pod), or with requests of 0, request none of the dimensions', () => {
    const bestEffort = makePod('be').obj();
    (bestEffort.spec!.containers as unknown[]).push({ name: 'c', image: 'busybox' });
    expect(noteOf(bestEffort)).toBe('the pod requests no cpu or memory: ranked as zero requests');
    expect(noteOf(makePod('zeros').req({ cpu: '0', memory: '0' }).obj())).toBe(
      'the pod requests no cpu or memory: ranked as zero requests',
    );
    // The dimensions configured are the ones named.
    expect(noteOf(makePod('zeros').req({}).obj(), { names: ['cpu', 'memory', 'nvidia.com/gpu'] })).toBe(
      'the pod requests no cpu or memory or nvidia.com/gpu: ranked as zero requests',
    );
  });

  it('says nothing of a pod that requests anything of a dimension, from a container, an init container, the pod level or its overhead', () => {
    expect(noteOf(makePod('a').req({ cpu: '1m' }).obj())).toBeNull();
    expect(noteOf(makePod('b').req({ memory: '1' }).obj())).toBeNull();
    // No containers, but an init container, pod-level requests or an overhead give it a request.
    expect(noteOf(makePod('c').init({ cpu: '100m' }).obj())).toBeNull();
    expect(noteOf(makePod('d').podResources({ cpu: '1' }).obj())).toBeNull();
    expect(noteOf(makePod('e').overhead({ memory: '64Mi' }).obj())).toBeNull();
  });

  it('a request outside the dimensions (a GPU only) still ranks as zero requests of the dimensions', () => {
    expect(noteOf(makePod('gpu').req({ 'nvidia.com/gpu': '1' }).obj())).toBe(
      'the pod requests no cpu or memory: ranked as zero requests',
    );
  });
});

describe('the messages carry the note', () => {
  // A node of 16 CPUs whose cpu pressure is `pressure` before and after a pod that requests nothing.
  const evaluation = (name: string, pressure: number): Evaluation => ({
    name,
    capacityKnown: true,
    allocatable: [16_000, 64 * 1024 ** 3],
    inUse: [pressure * 16_000, 0],
    projected: [pressure, 0],
    pressure,
    failures: [],
    starting: 0,
    running: 0,
    paused: 0,
  });

  it('placement: after everything else, and nothing when there is no note', () => {
    const summary = { chosen: evaluation('n1', 0.25), runnerUp: evaluation('n2', 0.5), candidates: 2, feasible: 2 };
    const plain =
      'placed on n1 by least_loaded: projected pressure cpu 0.250→0.250, memory 0.000→0.000 (max 0.250); 2 candidates, 2 fit; runner-up n2 at 0.500';
    expect(explainPlacement(summary, DIMS, 'least_loaded')).toBe(plain);
    expect(explainPlacement({ ...summary, podNote: null }, DIMS, 'least_loaded')).toBe(plain);
    expect(
      explainPlacement(
        { ...summary, podNote: 'the pod has no containers: ranked as zero requests' },
        DIMS,
        'least_loaded',
      ),
    ).toBe(`${plain}; the pod has no containers: ranked as zero requests`);
  });

  it('no fit: after the counts, before the example node', () => {
    const failed = [['n1', [{ code: 'StartingLimit', starting: 1, limit: 1 }]]] as const;
    expect(explainNoFit(1, failed)).toBe(
      '0/1 nodes fit projected capacity: 1 at the starting limit. e.g. n1: 1 sandboxes starting, limit 1',
    );
    expect(explainNoFit(1, failed, 'the pod has no containers: ranked as zero requests')).toBe(
      '0/1 nodes fit projected capacity: 1 at the starting limit; the pod has no containers: ranked as zero requests. e.g. n1: 1 sandboxes starting, limit 1',
    );
  });
});
