/**
 * What @kubernetes/client-node 1.4's Watch really does (through kube.ts's source), checked on a real HTTP
 * endpoint, and that the scripted source of the reflector tests does exactly the same: each case runs on both.
 */
import { describeFailure } from '../../src/cluster/reflector.js';
import { endpointDriver, obj, scriptedDriver, EXPIRED, type WatchDriver } from './watchDrivers.js';

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Seen {
  events: string[];
  done: unknown[];
  /** Whether done had been called when watch() resolved. */
  doneBeforeResolve: boolean;
  abort: () => void;
}

async function open(driver: WatchDriver, onEvent?: (type: string, object: unknown, seen: Seen) => void): Promise<Seen> {
  const seen: Seen = { events: [], done: [], doneBeforeResolve: false, abort: () => undefined };
  const abort = await driver.source.watch(
    { resourceVersion: '7', timeoutSeconds: 300 },
    (type, object) => {
      seen.events.push(
        `${type} ${(object as { metadata?: { name?: string } })?.metadata?.name ?? (object as { code?: number })?.code}`,
      );
      onEvent?.(type, object, seen);
    },
    (err) => seen.done.push(err),
  );
  seen.doneBeforeResolve = seen.done.length > 0;
  seen.abort = abort;
  return seen;
}

const describeErr = (err: unknown) =>
  err === null
    ? null
    : {
        name: (err as Error).name,
        message: (err as Error).message,
        statusCode: (err as { statusCode?: number }).statusCode,
      };

describe.each([
  ['scripted', async () => scriptedDriver()],
  ['client-node over HTTP', endpointDriver],
])('a watch through the %s source', (_name, makeDriver) => {
  let driver: WatchDriver;
  beforeEach(async () => {
    driver = await makeDriver();
  });
  afterEach(async () => {
    await driver.close();
  });

  it('asks for the resourceVersion and timeoutSeconds given, delivers events in order, and done(null) when the server ends the stream', async () => {
    const seen = await open(driver);
    await until(() => driver.watches.length === 1, 'the watch request');
    const w = driver.watches[0]!;
    expect([w.fromVersion, w.timeoutSeconds]).toEqual(['7', 300]);
    w.send('ADDED', obj('a', '8'));
    w.send('BOOKMARK', { metadata: { resourceVersion: '9' } });
    w.close();
    await until(() => seen.done.length > 0, 'done');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.events).toEqual(['ADDED a', 'BOOKMARK undefined']);
    expect(seen.done).toEqual([null]);
    expect(seen.doneBeforeResolve).toBe(false);
  });

  it('an HTTP 410 on the watch request: done(err with statusCode 410) before watch() resolves, no event', async () => {
    driver.refuseNextWatch(410);
    const seen = await open(driver);
    expect(seen.doneBeforeResolve).toBe(true);
    expect(seen.done.map(describeErr)).toEqual([{ name: 'Error', message: 'Gone', statusCode: 410 }]);
    expect(seen.events).toEqual([]);
  });

  it('an ERROR event in the stream is an ordinary callback; aborting in it calls done(AbortError) inside abort(), once', async () => {
    const doneDuringAbort: number[] = [];
    const seen = await open(driver, (type, _object, s) => {
      if (type !== 'ERROR') return;
      s.abort();
      doneDuringAbort.push(s.done.length);
    });
    await until(() => driver.watches.length === 1, 'the watch request');
    driver.watches[0]!.send('ERROR', EXPIRED);
    await until(() => seen.done.length > 0, 'done');
    await until(() => driver.watches[0]!.aborted, 'the request aborted');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.events).toEqual(['ERROR 410']);
    expect(doneDuringAbort).toEqual([1]); // synchronously: the 410 is lost unless recorded before abort()
    expect(seen.done.map(describeErr)).toEqual([
      { name: 'AbortError', message: 'The user aborted a request.', statusCode: undefined },
    ]);
  });

  it('an abort of an open, idle watch: done(AbortError) at once', async () => {
    const seen = await open(driver);
    await until(() => driver.watches.length === 1, 'the watch request');
    seen.abort();
    expect(seen.done.map(describeErr)).toEqual([
      { name: 'AbortError', message: 'The user aborted a request.', statusCode: undefined },
    ]);
    await until(() => driver.watches[0]!.aborted, 'the request aborted');
    seen.abort(); // a second abort changes nothing
    expect(seen.done).toHaveLength(1);
  });

  it('a connection broken mid-stream: done(Error "Premature close")', async () => {
    const seen = await open(driver);
    await until(() => driver.watches.length === 1, 'the watch request');
    driver.watches[0]!.send('ADDED', obj('a', '8'));
    await until(() => seen.events.length === 1, 'the event');
    driver.watches[0]!.breakConnection();
    await until(() => seen.done.length > 0, 'done');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.done.map(describeErr)).toEqual([{ name: 'Error', message: 'Premature close', statusCode: undefined }]);
  });

  it('what the callback throws is swallowed: later events still arrive and done is not called', async () => {
    const seen = await open(driver, (type) => {
      if (type === 'MODIFIED') throw new Error('consumer bug');
    });
    await until(() => driver.watches.length === 1, 'the watch request');
    driver.watches[0]!.send('MODIFIED', obj('a', '8'));
    driver.watches[0]!.send('DELETED', obj('a', '9'));
    await until(() => seen.events.length === 2, 'both events');
    expect(seen.done).toEqual([]);
    seen.abort();
  });

  it('a refused list is an error with the HTTP status in `code` and the Status in `body`', async () => {
    driver.queueLists({ status: 403 });
    const err = await driver.source.list({ limit: 10 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as { code?: number }).code).toBe(403);
    expect(describeFailure(err)).toBe('HTTP 403: scripted refusal');
  });
});
