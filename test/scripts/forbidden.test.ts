/**
 * test/e2e/forbidden.mjs, the 403 check of the e2e scripts: refusals count unless logged while kube-apiserver was
 * starting (between a "starting" and the next "ready" line the scripts write to its log).
 */
import { bootstrapWindows, countedRefusals } from '../e2e/forbidden.mjs';

const at = (iso: string) => Date.parse(iso);
const line = (iso: string, text: string) =>
  JSON.stringify({
    level: 40,
    time: at(iso),
    resource: 'pods',
    err: text,
    msg: 'list/watch failed; retrying with backoff',
  });

const APISERVER_LOG = [
  '--- e2e 2026-12-01T08:00:00Z: starting /bin/kube-apiserver --etcd-servers=http://127.0.0.1:2379',
  'I1201 08:00:01.000000 1 server.go:1] Version: v1.36.3',
  '--- e2e 2026-12-01T08:00:05.250Z: ready',
  '--- e2e 2026-12-01T08:10:00Z: starting /bin/kube-apiserver --etcd-servers=http://127.0.0.1:2379',
  '--- e2e 2026-12-01T08:10:04.500Z: ready',
  '--- e2e 2026-12-01T08:20:00Z: starting /bin/kube-apiserver --etcd-servers=http://127.0.0.1:2379',
].join('\n');

describe('forbidden.mjs', () => {
  it('reads one window per start that reached ready; a start without ready opens none', () => {
    expect(bootstrapWindows(APISERVER_LOG)).toEqual([
      [at('2026-12-01T08:00:00Z'), at('2026-12-01T08:00:05.250Z')],
      [at('2026-12-01T08:10:00Z'), at('2026-12-01T08:10:04.500Z')],
    ]);
  });

  it('ignores refusals inside a window and counts every other one', () => {
    const refusal = 'HTTP 403: pods is forbidden: User "sandbox-extender" cannot list resource "pods"';
    const extenderLog = [
      line('2026-12-01T08:10:03.000Z', refusal), // RBAC not loaded yet after the restart
      line('2026-12-01T08:10:04.500Z', refusal), // the window's last instant
      line('2026-12-01T08:10:04.501Z', refusal), // after ready: a missing permission
      line('2026-12-01T08:15:00.000Z', 'HTTP 500: etcdserver: request timed out'), // no refusal
      line('2026-12-01T08:20:01.000Z', refusal), // a start never seen ready: counts
      'events: patch failed: forbidden (no time on this line)',
    ];
    expect(countedRefusals(extenderLog.join('\n'), APISERVER_LOG)).toEqual([
      extenderLog[2],
      extenderLog[4],
      extenderLog[5],
    ]);
  });

  it('without the API server log every refusal counts', () => {
    expect(countedRefusals(line('2026-12-01T08:10:03.000Z', 'HTTP 403'))).toHaveLength(1);
  });

  it('a write into a namespace being deleted is no refusal of ours; any other 403 of the same request still counts', () => {
    const terminating = line(
      '2026-12-01T09:00:00.000Z',
      'HTTP 403: pods "p" is forbidden: unable to create new content in namespace q because it is being terminated',
    );
    const rbac = line(
      '2026-12-01T09:00:01.000Z',
      'HTTP 403: pods "p" is forbidden: User "system:serviceaccount:s:e" cannot create resource "pods/binding"',
    );
    expect(countedRefusals([terminating, rbac].join('\n'), APISERVER_LOG)).toEqual([rbac]);
  });
});
