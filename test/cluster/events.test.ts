import { pino } from 'pino';
import { EventRecorder, type CreateEventApi, type PodEvent } from '../../src/cluster/events.js';

const EVENT: PodEvent = {
  pod: { namespace: 'sandboxes', name: 'sb-1', uid: 'uid-1' },
  type: 'Normal',
  reason: 'ProjectedPlacement',
  message: 'placed on n192',
};

function recorder(options: { maxQueued?: number; fail?: boolean } = {}) {
  let now = 1_000_000;
  const bodies: { namespace: string; body: Record<string, unknown> }[] = [];
  const outcomes: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const api: CreateEventApi = {
    createNamespacedEvent: (async (param: { namespace: string; body: Record<string, unknown> }) => {
      await gate;
      if (options.fail) throw new Error('forbidden');
      bodies.push(param);
      return {};
    }) as unknown as CreateEventApi['createNamespacedEvent'],
  };
  const r = new EventRecorder(
    api,
    {
      eventsPerSecond: 1000,
      maxQueued: options.maxQueued ?? 100,
      dedupeWindowMs: 60_000,
      now: () => now,
      onOutcome: (o) => outcomes.push(o),
    },
    pino({ level: 'silent' }),
  );
  return { r, bodies, outcomes, release, advance: (ms: number) => (now += ms) };
}

async function settle(outcomes: string[], n: number): Promise<void> {
  for (let i = 0; i < 200 && outcomes.length < n; i++) await new Promise((r) => setTimeout(r, 2));
}

describe('EventRecorder', () => {
  it('creates a core/v1 Event on the pod with reason, message and source', async () => {
    const t = recorder();
    t.r.record(EVENT);
    t.release();
    await settle(t.outcomes, 1);
    expect(t.outcomes).toEqual(['recorded']);
    expect(t.bodies[0]).toMatchObject({
      namespace: 'sandboxes',
      body: {
        kind: 'Event',
        metadata: { generateName: 'sb-1.', namespace: 'sandboxes' },
        involvedObject: { kind: 'Pod', namespace: 'sandboxes', name: 'sb-1', uid: 'uid-1' },
        reason: 'ProjectedPlacement',
        message: 'placed on n192',
        type: 'Normal',
        source: { component: 'sandbox-extender' },
        count: 1,
      },
    });
  });

  it('bounds what it remembers for deduplication: past 10,000 keys it forgets, and the same event is recorded again', async () => {
    const t = recorder({ maxQueued: 20_000 });
    t.r.record(EVENT);
    for (let i = 0; i < 10_000; i++) t.r.record({ ...EVENT, pod: { ...EVENT.pod, uid: `uid-other-${i}` } });
    t.r.record(EVENT); // within the window, but its key was forgotten when the memory reached its bound
    // Deduplication is decided at once, before anything is sent: the repeat was queued, not deduplicated.
    expect(t.outcomes).toEqual([]);
    t.r.record(EVENT); // remembered again: now it is a repeat
    expect(t.outcomes).toEqual(['deduplicated']);
    t.release();
  }, 30_000);

  it('records the same pod, reason and message once per dedupe window', async () => {
    const t = recorder();
    t.r.record(EVENT);
    t.r.record(EVENT);
    t.r.record({ ...EVENT, message: 'placed on n64' }); // a different decision: recorded
    t.advance(60_000);
    t.r.record(EVENT); // the window has passed
    t.release();
    await settle(t.outcomes, 4);
    expect(t.outcomes.sort()).toEqual(['deduplicated', 'recorded', 'recorded', 'recorded']);
  });

  it('drops events rather than queue without bound, and survives API failures', async () => {
    const t = recorder({ maxQueued: 2, fail: true });
    for (let i = 0; i < 4; i++) t.r.record({ ...EVENT, message: `m${i}` });
    expect(t.outcomes).toEqual(['dropped', 'dropped']);
    t.release();
    await settle(t.outcomes, 4);
    expect(t.outcomes.sort()).toEqual(['dropped', 'dropped', 'failed', 'failed']);
    t.r.record({ ...EVENT, message: 'after' }); // the queue drained: accepted again
    await settle(t.outcomes, 5);
    expect(t.outcomes.at(-1)).toBe('failed');
  });
});
