/**
 * The extender's /metrics as the agent-sandbox and starting benchmarks read it (the cluster kit's metricSum and
 * waitEventsOut), against a loopback server that answers a fixed status and body.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { metricSum, waitEventsOut } from '../../test/e2e/kit/adminClient.js';

const METRICS = [
  'sandbox_extender_placements_total{result="placed"} 7',
  'sandbox_extender_placements_total{result="no_fit"} 2',
  'sandbox_extender_events_total 9',
].join('\n');

let server: Server | undefined;
let requests = 0;

/** Serves `body` with `status` on a free loopback port, counting the requests; resolves to its URL. */
function serve(status: number, body: string): Promise<string> {
  requests = 0;
  return new Promise((ok) => {
    server = createServer((_req, res) => {
      requests++;
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body);
    });
    server.listen(0, '127.0.0.1', () => ok(`http://127.0.0.1:${(server!.address() as { port: number }).port}`));
  });
}

afterEach(async () => {
  await new Promise((ok) => (server ? server.close(ok) : ok(undefined)));
  server = undefined;
});

describe('metricSum', () => {
  it('sums the samples of a name that carry every label pair asked for', async () => {
    const url = await serve(200, METRICS);
    expect(await metricSum(url, 'sandbox_extender_placements_total')).toBe(9);
    expect(await metricSum(url, 'sandbox_extender_placements_total', { result: 'no_fit' })).toBe(2);
    expect(await metricSum(url, 'absent')).toBe(0);
  });

  it('refuses an answer with an error status, whatever its body (the starting benchmark read the body before)', async () => {
    const url = await serve(503, METRICS);
    await expect(metricSum(url, 'sandbox_extender_events_total')).rejects.toThrow(`GET ${url}/metrics: HTTP 503`);
  });
});

describe('waitEventsOut', () => {
  it('returns after one look when an Event outcome has been sent for each decision', async () => {
    const url = await serve(200, METRICS);
    await waitEventsOut(url);
    expect(requests).toBe(1); // one /metrics answer holds placed, no_fit and events
  });
});
