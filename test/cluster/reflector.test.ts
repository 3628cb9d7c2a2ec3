import { Reflector, type ReflectorOptions, type WatchEventType } from '../../src/cluster/reflector.js';
import { EXPIRED, endpointDriver, obj, scriptedDriver, status, type Obj, type WatchDriver } from './watchDrivers.js';

/** Records what the reflector hands the consumer. */
function consumer() {
  const log: string[] = [];
  const state = new Map<string, Obj>();
  return {
    log,
    state,
    handlers: {
      beginListing() {
        const items: Obj[] = [];
        return {
          add: (page: readonly Obj[]) => void items.push(...page),
          complete: () => {
            log.push(`replace ${items.map((i) => i.metadata.name).join(',')}`);
            state.clear();
            for (const i of items) state.set(i.metadata.name, i);
          },
        };
      },
      event(type: WatchEventType, o: Obj) {
        log.push(`${type} ${o.metadata.name}`);
        if (type === 'DELETED') state.delete(o.metadata.name);
        else state.set(o.metadata.name, o);
      },
    },
  };
}

async function until(condition: () => boolean, what: string, detail: () => unknown = () => ''): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what} ${JSON.stringify(detail())}`);
}

const OPTIONS = { pageSize: 2, minBackoffMs: 1, maxBackoffMs: 5 };

/** A reflector on `driver` with what it reports collected. */
function reflectorOn(driver: WatchDriver, options: Partial<ReflectorOptions> = {}) {
  const c = consumer();
  const lists: [number, boolean][] = [];
  const restarts: string[] = [];
  const expiries: string[] = [];
  const r = new Reflector<Obj>('things', driver.source, c.handlers, {
    ...OPTIONS,
    onList: (n, relist) => lists.push([n, relist]),
    onRestart: (e) => restarts.push((e as Error).message),
    onExpired: (how) => expiries.push(how),
    ...options,
  });
  return { c, r, lists, restarts, expiries };
}

const watchesFrom = (driver: WatchDriver) => driver.watches.map((w) => w.fromVersion);

describe.each([
  ['scripted source', async () => scriptedDriver()],
  ['client-node over HTTP', endpointDriver],
])('Reflector (%s)', (_name, makeDriver) => {
  let driver: WatchDriver;
  let reflector: Reflector<Obj> | undefined;
  beforeEach(async () => {
    driver = await makeDriver();
    reflector = undefined;
  });
  afterEach(async () => {
    await reflector?.stop();
    await driver.close();
  });
  const start = (options: Partial<ReflectorOptions> = {}) => {
    const t = reflectorOn(driver, options);
    reflector = t.r;
    t.r.start();
    return t;
  };

  it('lists page by page, hands over the whole list once, watches from its resourceVersion with a timeout, and stop() aborts the watch', async () => {
    driver.queueLists(
      { items: [obj('a'), obj('b')], resourceVersion: '10', continueToken: 'page2' },
      { items: [obj('c')], resourceVersion: '11' },
    );
    const { r, c, lists } = start();
    expect(r.synced).toBe(false);
    await until(() => driver.watches.length === 1, 'the watch');
    expect(driver.listCalls).toEqual([
      { limit: 2, continueToken: undefined },
      { limit: 2, continueToken: 'page2' },
    ]);
    expect(c.log).toEqual(['replace a,b,c']);
    expect(lists).toEqual([[3, false]]);
    expect([driver.watches[0]!.fromVersion, driver.watches[0]!.timeoutSeconds]).toEqual(['11', 300]);
    expect(r.synced).toBe(true);
    await r.stop();
    await until(() => driver.watches[0]!.aborted, 'the watch aborted');
    expect(driver.watches).toHaveLength(1);
  });

  // Regression: the pages of a list were all kept as API objects until the last one came (at 150,000 pods a cold
  // start peaked at 1.5 GB RSS); each page now goes to the consumer's sink as it arrives, and a listing that fails
  // half-way is dropped without being applied.
  it('hands each page to the listing sink before asking for the next; a listing failed half-way is never applied', async () => {
    const pages: string[] = [];
    const completed: string[] = [];
    const handlers = {
      beginListing: () => {
        const names: string[] = [];
        return {
          add: (items: readonly Obj[]) => {
            pages.push(items.map((i) => i.metadata.name).join(','));
            names.push(...items.map((i) => i.metadata.name));
          },
          complete: (resourceVersion: string) => void completed.push(`${names.join(',')}@${resourceVersion}`),
        };
      },
      event: () => undefined,
    };
    driver.queueLists({ items: [obj('a'), obj('b')], resourceVersion: '10', continueToken: 'page2' });
    reflector = new Reflector<Obj>('things', driver.source, handlers, OPTIONS);
    reflector.start();
    await until(() => driver.listCalls.length === 2, 'the second page asked for');
    expect(pages).toEqual(['a,b']); // page 1 is the consumer's before page 2 is fetched
    driver.queueLists(
      { status: 500 },
      { items: [obj('a'), obj('b')], resourceVersion: '12', continueToken: 'p2' },
      { items: [obj('c')], resourceVersion: '12' },
    );
    await until(
      () => completed.length === 1,
      'a listing completed',
      () => ({ pages, completed }),
    );
    expect(pages).toEqual(['a,b', 'a,b', 'c']);
    expect(completed).toEqual(['a,b,c@12']); // the listing refused at page 2 was dropped
  });

  it('applies events, follows bookmarks, and resumes from the last resourceVersion when the server ends the watch', async () => {
    driver.queueLists({ items: [obj('a')], resourceVersion: '5' });
    const { c, restarts } = start();
    await until(() => driver.watches.length === 1, 'the watch');
    const w = driver.watches[0]!;
    w.send('ADDED', obj('b', '6'));
    w.send('MODIFIED', obj('a', '7'));
    w.send('DELETED', obj('b', '8'));
    w.send('BOOKMARK', { kind: 'Node', metadata: { resourceVersion: '20' } });
    await until(() => c.log.length === 4, 'the events');
    w.close(); // the API server's timeoutSeconds
    await until(() => driver.watches.length === 2, 'the second watch');
    expect(c.log).toEqual(['replace a', 'ADDED b', 'MODIFIED a', 'DELETED b']);
    expect(watchesFrom(driver)).toEqual(['5', '20']); // no relist, from the bookmark
    expect(driver.listCalls).toHaveLength(1);
    expect(restarts).toEqual([]);
  });

  it('a 410 ERROR event in the stream relists at once; the relist drops what was deleted meanwhile', async () => {
    driver.queueLists(
      { items: [obj('a'), obj('b')], resourceVersion: '5' },
      { items: [obj('a'), obj('c')], resourceVersion: '50' },
    );
    const { c, lists, restarts, expiries } = start();
    await until(() => driver.watches.length === 1, 'the watch');
    driver.watches[0]!.send('ERROR', EXPIRED);
    await until(
      () => driver.watches.length === 2,
      'the watch after the relist',
      () => ({ lists, restarts, watches: watchesFrom(driver) }),
    );
    expect(c.log).toEqual(['replace a,b', 'replace a,c']);
    expect([...c.state.keys()]).toEqual(['a', 'c']);
    expect(lists).toEqual([
      [2, false],
      [2, true],
    ]);
    expect(watchesFrom(driver)).toEqual(['5', '50']);
    expect(restarts).toEqual([]); // an expiry is no failure
    expect(expiries).toEqual([
      'ERROR event with a Status of code 410 (Expired) in the stream: too old resource version: 5 (90)',
    ]);
    await until(() => driver.watches[0]!.aborted, 'the expired watch closed');
  });

  it('an HTTP 410 answer to the watch request relists at once', async () => {
    driver.queueLists({ items: [obj('a')], resourceVersion: '5' }, { items: [obj('b')], resourceVersion: '60' });
    driver.refuseNextWatch(410);
    const { c, lists, restarts, expiries } = start();
    await until(
      () => driver.watches.length === 2,
      'the watch after the relist',
      () => ({ lists, restarts }),
    );
    expect(c.log).toEqual(['replace a', 'replace b']);
    expect(lists).toEqual([
      [1, false],
      [1, true],
    ]);
    expect(watchesFrom(driver)).toEqual(['5', '60']);
    expect(restarts).toEqual([]);
    expect(expiries).toEqual(['HTTP 410 on the watch request']);
  });

  it('a connection broken mid-stream resumes from the last resourceVersion seen, after a backoff, without relisting', async () => {
    driver.queueLists({ items: [obj('a')], resourceVersion: '5' });
    const { c, restarts } = start();
    await until(() => driver.watches.length === 1, 'the watch');
    driver.watches[0]!.send('MODIFIED', obj('a', '9'));
    driver.watches[0]!.send('BOOKMARK', { kind: 'Node', metadata: { resourceVersion: '12' } });
    await until(() => c.log.length === 2, 'the event');
    driver.watches[0]!.breakConnection();
    await until(() => driver.watches.length === 2, 'the resumed watch');
    expect(watchesFrom(driver)).toEqual(['5', '12']);
    expect(driver.listCalls).toHaveLength(1);
    expect(restarts).toEqual(['Premature close']);
  });

  it('a resume refused with 410 (in the stream or on the request) relists', async () => {
    driver.queueLists(
      { items: [obj('a')], resourceVersion: '5' },
      { items: [obj('a')], resourceVersion: '70' },
      { items: [obj('a')], resourceVersion: '80' },
    );
    const { c, lists, restarts } = start();
    await until(() => driver.watches.length === 1, 'the watch');
    driver.watches[0]!.send('MODIFIED', obj('a', '6'));
    await until(() => c.log.length === 2, 'the event');
    driver.watches[0]!.breakConnection();
    await until(() => driver.watches.length === 2, 'the resumed watch');
    driver.watches[1]!.send('ERROR', EXPIRED); // the API server restarted: its watch cache begins after resourceVersion 6
    await until(() => driver.watches.length === 3, 'the watch after the relist');
    driver.watches[2]!.send('MODIFIED', obj('a', '71'));
    await until(() => c.log.length === 4, 'the event');
    driver.watches[2]!.breakConnection();
    driver.refuseNextWatch(410);
    await until(
      () => driver.watches.length === 5,
      'the watch after the second relist',
      () => ({ lists, restarts, watches: watchesFrom(driver) }),
    );
    expect(watchesFrom(driver)).toEqual(['5', '6', '70', '71', '80']);
    expect(lists).toEqual([
      [1, false],
      [1, true],
      [1, true],
    ]);
    expect(restarts).toEqual(['Premature close', 'Premature close']);
  });

  it('an ERROR event other than 410 fails the session: the watch is closed and resumed from the last resourceVersion', async () => {
    driver.queueLists({ items: [], resourceVersion: '1' });
    const { restarts } = start();
    await until(() => driver.watches.length === 1, 'the watch');
    driver.watches[0]!.send('ERROR', status(500, 'InternalError', 'etcdserver: request timed out'));
    await until(() => driver.watches.length === 2, 'the restarted watch');
    expect(restarts).toEqual([
      'watch things: ERROR event with a Status of code 500 (InternalError): etcdserver: request timed out',
    ]);
    expect(watchesFrom(driver)).toEqual(['1', '1']);
    await until(() => driver.watches[0]!.aborted, 'the failed watch closed');
  });

  it('a refused list is retried with backoff; the reflector is synced only once a list succeeds', async () => {
    driver.queueLists({ status: 403 }, { status: 503 }, { items: [obj('a')], resourceVersion: '3' });
    const { r, restarts } = start();
    await until(() => driver.watches.length === 1, 'the watch after two refusals');
    expect(restarts.length).toBe(2);
    expect(r.synced).toBe(true);
    expect(driver.listCalls).toHaveLength(3);
  });

  it('a watch the server ends at once with nothing delivered counts as a failure (backoff), not as a normal end', async () => {
    driver.queueLists({ items: [], resourceVersion: '4' });
    const { restarts } = start();
    await until(() => driver.watches.length === 1, 'the watch');
    driver.watches[0]!.close();
    await until(() => driver.watches.length === 2, 'the next watch');
    expect(restarts).toEqual([
      'watch things: the API server ended the watch within 1 s without an event (a very short watch)',
    ]);
    expect(watchesFrom(driver)).toEqual(['4', '4']);
  });

  it('a second 410 in a row on a watch right after a fresh list backs off before relisting (no tight loop)', async () => {
    driver.queueLists(
      { items: [], resourceVersion: '4' },
      { items: [], resourceVersion: '5' },
      { items: [], resourceVersion: '6' },
    );
    driver.refuseNextWatch(410);
    driver.refuseNextWatch(410);
    const { lists, restarts } = start();
    await until(
      () => driver.watches.length === 3,
      'the third watch',
      () => ({ lists, restarts }),
    );
    expect(lists).toEqual([
      [0, false],
      [0, true],
      [0, true],
    ]);
    expect(restarts).toEqual([
      'watch things: 410 Gone again for the resourceVersion of a list just made (HTTP 410 on the watch request)',
    ]);
    expect(watchesFrom(driver)).toEqual(['4', '5', '6']);
  });
});

describe('Reflector health (for staleness)', () => {
  let driver: WatchDriver;
  let reflector: Reflector<Obj>;
  const clock = { now: 1_000_000 };
  beforeEach(() => {
    driver = scriptedDriver();
  });
  afterEach(async () => {
    await reflector?.stop();
  });
  const start = (options: Partial<ReflectorOptions> = {}) => {
    const t = reflectorOn(driver, { now: () => clock.now, ...options });
    reflector = t.r;
    t.r.start();
    return t;
  };

  it('reports the age of the last event, bookmark or list; a quiet watch, or one the server ends at its timeout, is not broken', async () => {
    clock.now = 1_000_000;
    driver.queueLists({ items: [obj('a')], resourceVersion: '5' });
    start();
    await until(() => driver.watches.length === 1, 'the watch');
    expect(reflector.health()).toEqual({
      resource: 'things',
      synced: true,
      watching: true,
      lastDeliveryAgeMs: 0,
      brokenMs: 0,
      lastError: null,
    });
    clock.now += 59_000; // no event for a minute: quiet, not broken
    expect(reflector.health()).toMatchObject({ watching: true, lastDeliveryAgeMs: 59_000, brokenMs: 0 });
    driver.watches[0]!.send('BOOKMARK', { metadata: { resourceVersion: '9' } });
    expect(reflector.health()).toMatchObject({ lastDeliveryAgeMs: 0, brokenMs: 0 });
    clock.now += 240_000;
    driver.watches[0]!.close(); // timeoutSeconds reached
    await until(() => driver.watches.length === 2, 'the next watch');
    expect(reflector.health()).toMatchObject({
      watching: true,
      lastDeliveryAgeMs: 240_000,
      brokenMs: 0,
      lastError: null,
    });
  });

  it('is broken from the first failure until a list, an event, or a watch that stays open; a watch failing right after it opens stays broken', async () => {
    clock.now = 2_000_000;
    driver.queueLists({ items: [obj('a')], resourceVersion: '5' });
    start();
    await until(() => driver.watches.length === 1, 'the watch');
    driver.watches[0]!.breakConnection();
    await until(() => driver.watches.length === 2, 'the second watch');
    clock.now += 1_000;
    // Reconnected, but a watch that fails at once (e.g. every attempt gets an ERROR event) is no recovery.
    driver.watches[1]!.send('ERROR', status(500, 'InternalError', 'boom'));
    await until(() => driver.watches.length === 3, 'the third watch');
    clock.now += 1_000;
    expect(reflector.health()).toMatchObject({
      synced: true,
      watching: true,
      brokenMs: 2_000,
      lastError: 'watch things: ERROR event with a Status of code 500 (InternalError): boom',
    });
    clock.now += 5_000; // the third watch has stayed open 5 s: the session is healthy again
    expect(reflector.health()).toMatchObject({ watching: true, brokenMs: 0, lastError: null });
    driver.watches[2]!.breakConnection();
    await until(() => driver.watches.length === 4, 'the fourth watch');
    clock.now += 3_000;
    expect(reflector.health()).toMatchObject({ brokenMs: 3_000, lastError: 'Premature close' }); // a new outage counts from its own start
    driver.watches[3]!.send('MODIFIED', obj('a', '10'));
    expect(reflector.health()).toMatchObject({ brokenMs: 0, lastDeliveryAgeMs: 0 });
  });

  it('is broken while lists are refused, before and after the initial sync', async () => {
    clock.now = 3_000_000;
    driver.queueLists({ status: 403 }, { status: 403 });
    start({ minBackoffMs: 20, maxBackoffMs: 20 });
    await until(() => driver.listCalls.length === 2, 'two lists');
    clock.now += 4_000;
    expect(reflector.health()).toMatchObject({
      synced: false,
      watching: false,
      brokenMs: 4_000,
      lastError: 'HTTP 403: scripted refusal',
    });
    driver.queueLists({ items: [], resourceVersion: '8' });
    await until(() => driver.watches.length === 1, 'the watch');
    expect(reflector.health()).toMatchObject({ synced: true, brokenMs: 0 });
  });

  it('aborts a watch the server has not ended well after its timeoutSeconds (a dead connection) and resumes it', async () => {
    driver.queueLists({ items: [], resourceVersion: '4' });
    const { restarts } = start({ watchDeadlineMs: 30 });
    await until(() => driver.watches.length === 2, 'the watch after the deadline');
    expect(driver.watches[0]!.aborted).toBe(true);
    expect(restarts[0]).toBe(
      'watch things: not ended by the API server 0.03 s after it opened (timeoutSeconds 300): the connection is presumed dead',
    );
    expect(watchesFrom(driver).slice(0, 2)).toEqual(['4', '4']);
  });
});
