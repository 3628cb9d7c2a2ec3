/**
 * HTTPS and client-certificate verification (mTLS) for a remote extender: the bind verb can move any
 * pod, so with server.tls.clientCaFile only clients holding a certificate from that CA get an answer.
 * Certificates are made with openssl for the test.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { serve, type RunningServer } from '../../src/runtime/serve.js';

let dir: string;
let server: RunningServer;
const file = (name: string) => join(dir, name);

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

/** Issues `<name>.crt`/`.key` signed by the test CA, with subject CN=`cn`. */
function issue(name: string, cn: string, ext: string): void {
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    `/CN=${cn}`,
    '-keyout',
    file(`${name}.key.new`),
    '-out',
    file(`${name}.csr`),
  );
  writeFileSync(file(`${name}.ext`), ext);
  openssl(
    'x509',
    '-req',
    '-in',
    file(`${name}.csr`),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    file(`${name}.ext`),
    '-out',
    file(`${name}.crt.new`),
  );
  // Replace both files as a renewal would (key first, then the certificate).
  renameSync(file(`${name}.key.new`), file(`${name}.key`));
  renameSync(file(`${name}.crt.new`), file(`${name}.crt`));
}

const SERVER_EXT = 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n';

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA. */
function makeCertificates(): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
  );
  issue('server', 'server', SERVER_EXT);
  issue('client', 'client', 'extendedKeyUsage=clientAuth\n');
}

/** The subject CN of the certificate the server presents to a new connection. */
function servedCommonName(): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL('/healthz', server.url),
      {
        agent: false,
        ca: readFileSync(file('ca.crt')),
        cert: readFileSync(file('client.crt')),
        key: readFileSync(file('client.key')),
      },
      (res) => {
        const cn = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN;
        res.resume();
        res.on('end', () => resolve(String(cn)));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function get(path: string, client: boolean): Promise<{ status: number; body: string }> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        ca: readFileSync(file('ca.crt')),
        ...(client ? { cert: readFileSync(file('client.crt')), key: readFileSync(file('client.key')) } : {}),
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-tls-'));
  makeCertificates();
  const config = parseConfig({
    snapshot: { path: new URL('../../examples/snapshot.json', import.meta.url).pathname },
    server: {
      port: 0,
      tls: {
        certFile: file('server.crt'),
        keyFile: file('server.key'),
        clientCaFile: file('ca.crt'),
        reloadIntervalMs: 50,
      },
    },
  });
  server = await serve(config, pino({ level: 'silent' }));
}, 30_000);

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('HTTPS with client-certificate verification', () => {
  it('serves over https', () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers a client that presents a certificate from the configured CA', async () => {
    expect(await get('/healthz', true)).toEqual({ status: 200, body: 'ok' });
  });

  it('refuses a client without a certificate before any verb runs', async () => {
    await expect(get('/healthz', false)).rejects.toThrow(/certificate|handshake|socket hang up|ECONNRESET/i);
  });

  it('a renewed serving certificate is used for new connections without a restart', async () => {
    expect(await servedCommonName()).toBe('server');
    issue('server', 'server-renewed', SERVER_EXT);
    let cn = '';
    for (let i = 0; i < 100 && cn !== 'server-renewed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      cn = await servedCommonName();
    }
    expect(cn).toBe('server-renewed');
    expect(await server.metrics.registry.getSingleMetricAsString('sandbox_extender_tls_reloads_total')).toMatch(
      /result="ok"} [1-9]/,
    );
  });
});

describe('a renewal that cannot be loaded', () => {
  // Regression (new-user trial): the reload error carried OpenSSL's message alone, naming no file.
  it('keeps the previous certificate, counts an error and logs the files it tried', async () => {
    const certFile = file('reload.crt');
    const keyFile = file('reload.key');
    copyFileSync(file('server.crt'), certFile);
    copyFileSync(file('server.key'), keyFile);
    const lines: string[] = [];
    const running = await serve(
      parseConfig({
        snapshot: { path: new URL('../../examples/snapshot.json', import.meta.url).pathname },
        server: { port: 0, tls: { certFile, keyFile, reloadIntervalMs: 50 } },
      }),
      pino({ level: 'error' }, { write: (line: string) => void lines.push(line) }),
    );
    try {
      writeFileSync(certFile, 'not a certificate\n');
      for (let i = 0; i < 100 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      const logged = JSON.parse(lines[0] ?? '{}') as { msg?: string; files?: string[] };
      expect(logged.msg).toBe('serving certificate not reloaded; keeping the previous one');
      expect(logged.files).toEqual([certFile, keyFile]);
      expect(await running.metrics.registry.getSingleMetricAsString('sandbox_extender_tls_reloads_total')).toMatch(
        /result="error"} [1-9]/,
      );
    } finally {
      await running.close();
    }
  });
});

describe('TLS files that cannot be read', () => {
  /** What serve() rejects with for the example snapshot, the test certificate and `keyFile` (null: it started). */
  const startError = (keyFile: string) =>
    serve(
      parseConfig({
        snapshot: { path: new URL('../../examples/snapshot.json', import.meta.url).pathname },
        server: { port: 0, tls: { certFile: file('server.crt'), keyFile } },
      }),
      pino({ level: 'silent' }),
    ).then(
      async (s) => {
        await s.close();
        return null;
      },
      (e: unknown) => e,
    );

  it('fail at start with a ConfigError naming the key and the path (the CLI exits 2), before anything listens', async () => {
    const missing = join(dir, 'no-such.key');
    const err = await startError(missing);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      new RegExp(`server\\.tls\\.keyFile: cannot read ${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ENOENT`),
    );
  });

  // Regression (new-user trial): only the first unreadable file was named; fixing it showed the next one.
  it('every unreadable file is named in the one error, each with its key', async () => {
    const paths = {
      certFile: join(dir, 'gone.crt'),
      keyFile: join(dir, 'gone.key'),
      clientCaFile: join(dir, 'gone-ca.crt'),
    };
    const err = await serve(
      parseConfig({
        snapshot: { path: new URL('../../examples/snapshot.json', import.meta.url).pathname },
        server: { port: 0, tls: paths },
      }),
      pino({ level: 'silent' }),
    ).then(
      async (s) => {
        await s.close();
        return null;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual(
      (['certFile', 'keyFile', 'clientCaFile'] as const).map(
        (key) =>
          `server.tls.${key}: cannot read ${paths[key]}: ENOENT: no such file or directory, open '${paths[key]}'`,
      ),
    );
  });

  it('a file that is read but is no PEM fails the same way, naming the files (not OpenSSL’s message alone)', async () => {
    const notPem = join(dir, 'not-pem.key');
    writeFileSync(notPem, 'this is not a key\n');
    const err = await startError(notPem);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(
      `server.tls: certFile ${file('server.crt')}, keyFile ${notPem}: not a usable PEM certificate and key: `,
    );
  });
});
