import { Reflector, type ListPage, type ResourceSource, type WatchEventType } from '../../src/cluster/reflector.js';

interface Obj {
  metadata: { name: string; resourceVersion?: string };
}

const obj = (name: string, resourceVersion?: string): Obj => ({ metadata: { name, ...(resourceVersion ? { resourceVersion } : {}) } });

interface OpenWatch {
  fromVersion: string;
  send: (type: string, object: unknown) => void;
  end: (err: unknown) => void;
  aborted: boolean;
}

/** A scripted API server: list answers come from a queue, watches are driven by the test. */
class ScriptedSource implements ResourceSource<Obj> {
  readonly listCalls: { limit: number; continueToken?: string | undefined }[] = [];
  readonly watches: OpenWatch[] = [];
  constructor(private readonly lists: (ListPage<Obj> | Error)[]) {}

  async list(options: { limit: number; continueToken?: string | undefined }): Promise<ListPage<Obj>> {
    this.listCalls.push(options);
    const next = this.lists.shift();
    if (!next) throw new Error('no more scripted lists');
    if (next instanceof Error) throw next;
    return next;
  }

  async watch(fromVersion: string, onEvent: (type: string, object: unknown) => void, onDone: (err: unknown) => void): Promise<() => void> {
    const w: OpenWatch = { fromVersion, send: onEvent, end: onDone, aborted: false };
    this.watches.push(w);
    return () => {
      w.aborted = true;
    };
  }
}

/** Records what the reflector hands the consumer. */
function consumer() {
  const log: string[] = [];
  const state = new Map<string, Obj>();
  return {
    log,
    state,
    handlers: {
      replace(items: readonly Obj[]) {
        log.push(`replace ${items.map((i) => i.metadata.name).join(',')}`);
        state.clear();
        for (const i of items) state.set(i.metadata.name, i);
      },
      event(type: WatchEventType, o: Obj) {
        log.push(`${type} ${o.metadata.name}`);
        if (type === 'DELETED') state.delete(o.metadata.name);
        else state.set(o.metadata.name, o);
      },
    },
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const OPTIONS = { pageSize: 2, minBackoffMs: 1, maxBackoffMs: 5 };

describe('Reflector', () => {
  it('lists page by page, hands over the whole list once, then watches from its resourceVersion', async () => {
    const source = new ScriptedSource([
      { items: [obj('a'), obj('b')], resourceVersion: '10', continueToken: 'page2' },
      { items: [obj('c')], resourceVersion: '11', continueToken: '' },
    ]);
    const c = consumer();
    const r = new Reflector('things', source, c.handlers, OPTIONS);
    expect(r.synced).toBe(false);
    r.start();
    await until(() => source.watches.length === 1, 'the watch');
    expect(source.listCalls).toEqual([{ limit: 2, continueToken: undefined }, { limit: 2, continueToken: 'page2' }]);
    expect(c.log).toEqual(['replace a,b,c']);
    expect(source.watches[0]!.fromVersion).toBe('11');
    expect(r.synced).toBe(true);
    await r.stop();
    expect(source.watches[0]!.aborted).toBe(true);
  });

  it('applies events, follows bookmarks, and resumes from the last resourceVersion when the server closes the watch', async () => {
    const source = new ScriptedSource([{ items: [obj('a')], resourceVersion: '5' }]);
    const c = consumer();
    const r = new Reflector('things', source, c.handlers, OPTIONS);
    r.start();
    await until(() => source.watches.length === 1, 'the watch');
    const w = source.watches[0]!;
    w.send('ADDED', obj('b', '6'));
    w.send('MODIFIED', obj('a', '7'));
    w.send('DELETED', obj('b', '8'));
    w.send('BOOKMARK', { metadata: { resourceVersion: '20' } });
    w.end(null); // the API server's watch timeout
    await until(() => source.watches.length === 2, 'the second watch');
    expect(c.log).toEqual(['replace a', 'ADDED b', 'MODIFIED a', 'DELETED b']);
    expect(source.watches[1]!.fromVersion).toBe('20'); // no relist, from the bookmark
    expect(source.listCalls.length).toBe(1);
    await r.stop();
  });

  it('relists at once on 410 Gone, and the new list removes objects deleted meanwhile (tombstones)', async () => {
    const source = new ScriptedSource([
      { items: [obj('a'), obj('b')], resourceVersion: '5' },
      { items: [obj('a')], resourceVersion: '50' },
      { items: [obj('a')], resourceVersion: '60' },
    ]);
    const c = consumer();
    const lists: [number, boolean][] = [];
    const restarts: unknown[] = [];
    const r = new Reflector('things', source, c.handlers, { ...OPTIONS, onList: (n, relist) => lists.push([n, relist]), onRestart: (e) => restarts.push(e) });
    r.start();
    await until(() => source.watches.length === 1, 'the watch');
    source.watches[0]!.send('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    await until(() => source.watches.length === 2, 'the watch after the relist');
    expect(c.log).toEqual(['replace a,b', 'replace a']);
    expect([...c.state.keys()]).toEqual(['a']);
    expect(source.watches[1]!.fromVersion).toBe('50');
    // An HTTP 410 on the watch request itself is the same.
    source.watches[1]!.end(Object.assign(new Error('Gone'), { statusCode: 410 }));
    await until(() => source.watches.length === 3, 'the third watch');
    expect(lists).toEqual([[2, false], [1, true], [1, true]]);
    expect(restarts).toEqual([]); // expiry is not a failure
    await r.stop();
  });

  it('restarts a failed session with backoff and reports each restart', async () => {
    const source = new ScriptedSource([new Error('connection refused'), new Error('connection refused'), { items: [obj('a')], resourceVersion: '3' }]);
    const c = consumer();
    const restarts: string[] = [];
    const r = new Reflector('things', source, c.handlers, { ...OPTIONS, onRestart: (e) => restarts.push((e as Error).message) });
    r.start();
    await until(() => source.watches.length === 1, 'the watch after two failures');
    expect(restarts).toEqual(['connection refused', 'connection refused']);
    expect(r.synced).toBe(true);
    // A watch that breaks (not 410) restarts the session: watch again from the known version, no relist.
    source.watches[0]!.end(new Error('stream reset'));
    await until(() => source.watches.length === 2, 'the watch after the reset');
    expect(restarts).toEqual(['connection refused', 'connection refused', 'stream reset']);
    expect(source.watches[1]!.fromVersion).toBe('3');
    expect(source.listCalls.length).toBe(3);
    await r.stop();
  });

  it('an ERROR event other than 410 fails the session', async () => {
    const source = new ScriptedSource([{ items: [], resourceVersion: '1' }]);
    const restarts: string[] = [];
    const r = new Reflector('things', source, consumer().handlers, { ...OPTIONS, onRestart: (e) => restarts.push((e as Error).message) });
    r.start();
    await until(() => source.watches.length === 1, 'the watch');
    source.watches[0]!.send('ERROR', { kind: 'Status', code: 500, message: 'etcdserver: request timed out' });
    await until(() => source.watches.length === 2, 'the restarted watch');
    expect(restarts).toEqual(['watch things: etcdserver: request timed out']);
    expect(source.watches[0]!.aborted).toBe(true);
    await r.stop();
  });
});
