/**
 * The floor extender started as a process (the built dist/bench/floorExtender.js, which `npm test` builds
 * first), as the cluster scenario (--floor) and the scheduler-perf scenario's floor variant start it.
 */
import { describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFloorExtender } from '../../bench/floorProcess.js';

const SCRIPT = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/bench/floorExtender.js');

const sockets = new Map<Server, Set<Socket>>();

/** A listening TCP server on a free loopback port; it accepts connections and answers nothing. */
function listen(): Promise<Server> {
  return new Promise((ok, bad) => {
    const open = new Set<Socket>();
    const s = createServer((socket) => {
      open.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => open.delete(socket));
    });
    sockets.set(s, open);
    s.once('error', bad);
    s.listen(0, '127.0.0.1', () => ok(s));
  });
}

/** Closes a server of listen() and the connections it still holds. */
function close(s: Server): Promise<void> {
  for (const socket of sockets.get(s) ?? []) socket.destroy();
  return new Promise((ok) => s.close(() => ok()));
}

const portOf = (s: Server) => (s.address() as { port: number }).port;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('startFloorExtender', () => {
  it('resolves once it answers /readyz; it answers Filter with one name; stop ends it', async () => {
    const probe = await listen();
    const port = portOf(probe);
    await close(probe);
    const url = `http://127.0.0.1:${port}`;
    const floor = await startFloorExtender(url, { stderr: 'ignore', script: SCRIPT });
    try {
      expect(floor.url).toBe(url);
      expect(alive(floor.pid)).toBe(true);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const reply = await fetch(`${url}/filter`, {
        method: 'POST',
        body: JSON.stringify({ Pod: {}, NodeNames: ['node-a', 'node-b'] }),
      });
      expect(await reply.json()).toEqual({
        NodeNames: ['node-a'],
        FailedNodes: {},
        FailedAndUnresolvableNodes: {},
        Error: '',
      });
    } finally {
      await floor.stop();
    }
    expect(alive(floor.pid)).toBe(false);
    await floor.stop(); // a second stop is a no-op
  });

  it('rejects, naming the script, when the floor ends before it is ready (its port taken by a listener that never answers)', async () => {
    const taken = await listen();
    try {
      await expect(
        startFloorExtender(`http://127.0.0.1:${portOf(taken)}`, { stderr: 'ignore', script: SCRIPT }),
      ).rejects.toThrow(/the floor extender \(.*floorExtender\.js\) ended before it was ready \(exit code 1/);
    } finally {
      await close(taken);
    }
  });
});
