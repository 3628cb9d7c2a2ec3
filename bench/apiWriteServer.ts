/**
 * A stand-in API server for `npm run bench -- verbs`'s API-write part (bench.ts): HTTPS on loopback with the
 * certificate and key whose paths it is given, answering every POST with 201 and an Event as the API server
 * would return it, in a process of its own (so its CPU is not counted with the client's). Prints its port.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const [certFile, keyFile] = process.argv.slice(2);
const reply = JSON.stringify({
  kind: 'Event',
  apiVersion: 'v1',
  metadata: {
    name: 'p.18a3c',
    namespace: 'bench',
    uid: 'a8c0e7b2-0000-4000-8000-000000000000',
    resourceVersion: '123456',
    creationTimestamp: '2026-12-01T18:00:00Z',
  },
  involvedObject: { kind: 'Pod', namespace: 'bench', name: 'p', uid: 'u', apiVersion: 'v1' },
  reason: 'ProjectedPlacement',
  message:
    'placed on node-1 by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 1000 candidates, 1000 fit; runner-up node-2 at 0.135',
  source: { component: 'sandbox-extender' },
  firstTimestamp: '2026-12-01T18:00:00Z',
  lastTimestamp: '2026-12-01T18:00:00Z',
  count: 1,
  type: 'Normal',
  reportingComponent: 'sandbox-extender',
  reportingInstance: 'h',
});
const server = createServer({ cert: readFileSync(certFile!), key: readFileSync(keyFile!) }, (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(reply);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
