// The pod's read-only window onto the extender (scheduler mode). The extender listens on loopback only,
// because its bind verb creates Bindings; kubelet probes and Prometheus cannot reach loopback. This proxy,
// run by the extender image's node, forwards GET /healthz, /readyz and /metrics to it and answers
// everything else 404; GET /livez is its own liveness. No dependencies.
//
//   GATEWAY_LISTEN=0.0.0.0:9090  GATEWAY_UPSTREAM=http://127.0.0.1:8888  node metrics-gateway.mjs
import http from 'node:http';

const ALLOWED = new Set(['/healthz', '/readyz', '/metrics']);
const TIMEOUT_MS = 5000;

function hostPort(value, name) {
  const m = /^(.*):(\d+)$/.exec(value ?? '');
  if (!m) throw new Error(`${name} must be HOST:PORT, not "${value}"`);
  return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

const listen = hostPort(process.env.GATEWAY_LISTEN ?? '0.0.0.0:9090', 'GATEWAY_LISTEN');
const upstream = new URL(process.env.GATEWAY_UPSTREAM ?? 'http://127.0.0.1:8888');
if (upstream.protocol !== 'http:') throw new Error('GATEWAY_UPSTREAM must be an http:// URL (the extender on loopback)');

function reply(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
}

const server = http.createServer((req, res) => {
  const path = (req.url ?? '').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'only GET');
  if (path === '/livez') return reply(res, 200, 'ok');
  if (!ALLOWED.has(path)) return reply(res, 404, 'not found: this port serves /healthz, /readyz and /metrics');
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: { accept: req.headers.accept ?? '*/*' }, timeout: TIMEOUT_MS },
    (up) => {
      res.writeHead(up.statusCode ?? 502, { 'content-type': up.headers['content-type'] ?? 'text/plain' });
      up.pipe(res);
    },
  );
  forward.on('timeout', () => forward.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
  forward.on('error', (err) => {
    if (!res.headersSent) reply(res, 503, `extender unreachable at ${upstream.origin}: ${err.message}`);
    else res.destroy();
  });
  forward.end();
});
server.keepAliveTimeout = 65_000;
server.listen(listen.port, listen.host, () => {
  process.stdout.write(`${JSON.stringify({ msg: 'metrics gateway listening', listen: `${listen.host}:${listen.port}`, upstream: upstream.origin })}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.closeAllConnections?.();
    server.close(() => process.exit(0));
  });
}
