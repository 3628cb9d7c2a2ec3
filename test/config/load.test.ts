/**
 * Configuration loading (src/config/load.ts + schema.ts): defaults, YAML files, flag overrides and
 * error reporting (every problem at once, each with its path).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, configJsonSchema, loadConfig, parseConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { thrown } from '../fixtures/thrown.js';

const EXAMPLE_CONFIG = fileURLToPath(new URL('../../examples/config.yaml', import.meta.url));

const DEFAULTS = {
  strategy: 'least_loaded',
  dimensions: ['cpu', 'memory'],
  placementReservationTtlSeconds: 600,
  unconfirmedReservationTtlSeconds: 30,
  chooseInFilter: true,
  kubeScheduler: { percentageOfNodesToScore: 100 },
  startingLimit: {},
  locality: {
    enabled: false,
    pressureBand: 0.05,
    templateLabel: 'agents.x-k8s.io/sandbox-template-ref-hash',
    ttlSeconds: 28_800,
    maxEntries: 100_000,
    maxImagesPerNode: 50,
  },
  pausedLabel: 'sandbox-extender.io/paused',
  schedulerName: 'sandbox-scheduler',
  server: {
    host: '127.0.0.1',
    port: 8888,
    maxRequestBodyBytes: 64 * 1024 * 1024,
    maxRequestDepth: 100,
    maxRequestElements: 4_000_000,
    maxObjectMembers: 10_000,
    keepAliveTimeoutSeconds: 120,
    requestTimeoutSeconds: 30,
    requestLogWindowSeconds: 60,
  },
  snapshot: { pollIntervalMs: 1000 },
  logLevel: 'info',
  watch: { pageSize: 500, minBackoffMs: 500, maxBackoffMs: 30_000, maxBrokenSeconds: 30 },
  events: { enabled: true, perSecond: 20, maxQueued: 1000, dedupeWindowSeconds: 600 },
  requeue: {
    enabled: true,
    namespace: 'kube-system',
    name: 'sandbox-extender-requeue',
    perSecond: 2,
    maxPods: 10_000,
    raceWindowSeconds: 5,
  },
  metrics: { maxNodeSeries: 500 },
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-config-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let fileCounter = 0;
function yamlFile(text: string): string {
  const path = join(dir, `config-${fileCounter++}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** The ConfigError thrown by `fn` (fails the test if nothing or something else is thrown). */
function configError(fn: () => unknown): ConfigError {
  return thrown(ConfigError, fn);
}

describe('defaults', () => {
  it('parseConfig({}) gives every default (no randomSeed, no snapshot path)', () => {
    expect(parseConfig({})).toEqual(DEFAULTS);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
  ])('parseConfig(%s) is the defaults too', (_name, input) => {
    expect(parseConfig(input)).toEqual(DEFAULTS);
  });

  it('loadConfig without a file is the defaults', () => {
    expect(loadConfig(undefined)).toEqual(DEFAULTS);
  });

  it('an empty file and a comment-only file are the defaults', () => {
    expect(loadConfig(yamlFile(''))).toEqual(DEFAULTS);
    expect(loadConfig(yamlFile('# nothing set\n'))).toEqual(DEFAULTS);
  });

  it('examples/config.yaml ("defaults shown") loads to exactly the defaults', () => {
    expect(loadConfig(EXAMPLE_CONFIG)).toEqual(DEFAULTS);
  });

  it('a partial server section keeps the defaults of the fields not given', () => {
    expect(parseConfig({ server: { port: 9000 } }).server).toEqual({ ...DEFAULTS.server, port: 9000 });
    expect(parseConfig({ snapshot: { path: '/x.json' } }).snapshot).toEqual({ path: '/x.json', pollIntervalMs: 1000 });
  });

  it('the result is deeply frozen', () => {
    const config = parseConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
    expect(Object.isFrozen(config.dimensions)).toBe(true);
    expect(() => {
      (config as { strategy: string }).strategy = 'random';
    }).toThrow(TypeError);
    // Freezing one result does not freeze the schema defaults for the next parse.
    const again = parseConfig({});
    expect(again).toEqual(DEFAULTS);
    expect(again.dimensions).not.toBe(config.dimensions);
  });
});

describe('a full, valid file', () => {
  it('every key read from YAML', () => {
    const path = yamlFile(
      [
        'strategy: most_loaded',
        'dimensions: [cpu, memory, nvidia.com/gpu, pods]',
        'placementReservationTtlSeconds: 30',
        'unconfirmedReservationTtlSeconds: 5',
        'chooseInFilter: false',
        'kubeScheduler: {percentageOfNodesToScore: 0}',
        'startingLimit: {perNode: 8, perCore: 0.125}',
        'locality: {enabled: true, pressureBand: 0.1, templateLabel: example.com/template, ttlSeconds: 60, maxEntries: 10, maxImagesPerNode: 5}',
        'pausedLabel: example.com/paused',
        'schedulerName: my-scheduler',
        'randomSeed: 42',
        'server:',
        '  host: 0.0.0.0',
        '  port: 0',
        '  maxRequestBodyBytes: 1048576',
        '  keepAliveTimeoutSeconds: 75',
        '  tls: {certFile: /tls/tls.crt, keyFile: /tls/tls.key, clientCaFile: /tls/ca.crt}',
        'snapshot:',
        '  path: /var/run/snapshot.yaml',
        '  pollIntervalMs: 50',
        'logLevel: debug',
        'watch: {pageSize: 100, minBackoffMs: 10, maxBackoffMs: 1000, maxBrokenSeconds: 5}',
        'events: {enabled: false, perSecond: 5, maxQueued: 10, dedupeWindowSeconds: 60}',
        'metrics: {maxNodeSeries: 50}',
        'requeue: {enabled: false, namespace: sandbox-system, name: requeue, perSecond: 0.5, maxPods: 100, raceWindowSeconds: 0}',
      ].join('\n'),
    );
    expect(loadConfig(path)).toEqual({
      strategy: 'most_loaded',
      dimensions: ['cpu', 'memory', 'nvidia.com/gpu', 'pods'],
      placementReservationTtlSeconds: 30,
      unconfirmedReservationTtlSeconds: 5,
      chooseInFilter: false,
      kubeScheduler: { percentageOfNodesToScore: 0 },
      startingLimit: { perNode: 8, perCore: 0.125 },
      locality: {
        enabled: true,
        pressureBand: 0.1,
        templateLabel: 'example.com/template',
        ttlSeconds: 60,
        maxEntries: 10,
        maxImagesPerNode: 5,
      },
      pausedLabel: 'example.com/paused',
      schedulerName: 'my-scheduler',
      randomSeed: 42,
      server: {
        host: '0.0.0.0',
        port: 0,
        maxRequestBodyBytes: 1048576,
        maxRequestDepth: 100,
        maxRequestElements: 4_000_000,
        maxObjectMembers: 10_000,
        keepAliveTimeoutSeconds: 75,
        requestTimeoutSeconds: 30,
        requestLogWindowSeconds: 60,
        tls: {
          certFile: '/tls/tls.crt',
          keyFile: '/tls/tls.key',
          clientCaFile: '/tls/ca.crt',
          reloadIntervalMs: 10_000,
        },
      },
      snapshot: { path: '/var/run/snapshot.yaml', pollIntervalMs: 50 },
      logLevel: 'debug',
      watch: { pageSize: 100, minBackoffMs: 10, maxBackoffMs: 1000, maxBrokenSeconds: 5 },
      events: { enabled: false, perSecond: 5, maxQueued: 10, dedupeWindowSeconds: 60 },
      metrics: { maxNodeSeries: 50 },
      requeue: {
        enabled: false,
        namespace: 'sandbox-system',
        name: 'requeue',
        perSecond: 0.5,
        maxPods: 100,
        raceWindowSeconds: 0,
      },
    });
  });
});

describe('kubeconfig', () => {
  // The full file above sets snapshot.path, which kubeconfig may not be set beside (two modes).
  it('is read from YAML in a file without snapshot.path', () => {
    expect(loadConfig(yamlFile('kubeconfig: /etc/kubeconfig\n')).kubeconfig).toBe('/etc/kubeconfig');
  });
});

describe('every problem is listed with its path', () => {
  it('a YAML file with eight errors names each one, and the file', () => {
    const path = yamlFile(
      [
        'strategy: fastest',
        'dimensions: [cpu, cpu]',
        'placementReservationTtlSeconds: -5',
        'server:',
        '  port: 70000',
        '  bogus: 1',
        'snapshot:',
        '  pollIntervalMs: 10',
        'logLevel: loud',
        'extra: true',
      ].join('\n'),
    );
    const err = configError(() => loadConfig(path));
    expect(err.source).toBe(path);
    expect([...err.issues].sort()).toEqual(
      [
        'strategy: Invalid option: expected one of "least_loaded"|"most_loaded"|"round_robin"|"random"',
        'dimensions: must not repeat a resource',
        'placementReservationTtlSeconds: Too small: expected number to be >0',
        'server.port: Too big: expected number to be <=65535',
        'server: Unrecognized key: "bogus"',
        'snapshot.pollIntervalMs: Too small: expected number to be >=50',
        'logLevel: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"',
        '(root): Unrecognized key: "extra"',
      ].sort(),
    );
    expect(err.message.startsWith(`invalid configuration (${path}):\n`)).toBe(true);
    for (const issue of err.issues) expect(err.message).toContain(`  - ${issue}`);
  });

  it.each([
    [
      'a resource name with a space',
      { dimensions: ['cpu', 'nvidia gpu'] },
      'dimensions.1: must be a Kubernetes resource name such as cpu, memory or nvidia.com/gpu',
    ],
    ['no dimensions', { dimensions: [] }, 'dimensions: Too small: expected array to have >=1 items'],
    [
      'a label key with a space',
      { pausedLabel: 'sandbox paused' },
      'pausedLabel: must be a Kubernetes label key such as sandbox-extender.io/paused',
    ],
    ['a fractional seed', { randomSeed: 1.5 }, 'randomSeed: Invalid input: expected int, received number'],
    [
      'a port as a string',
      { server: { port: '8888' } },
      'server.port: Invalid input: expected number, received string',
    ],
    ['a negative port', { server: { port: -1 } }, 'server.port: Too small: expected number to be >=0'],
    [
      'a zero body limit',
      { server: { maxRequestBodyBytes: 0 } },
      'server.maxRequestBodyBytes: Too small: expected number to be >0',
    ],
    [
      'a zero depth bound',
      { server: { maxRequestDepth: 0 } },
      'server.maxRequestDepth: Too small: expected number to be >=1',
    ],
    [
      'a fractional element bound',
      { server: { maxRequestElements: 1.5 } },
      'server.maxRequestElements: Invalid input: expected int, received number',
    ],
    [
      'a negative log window',
      { server: { requestLogWindowSeconds: -1 } },
      'server.requestLogWindowSeconds: Too small: expected number to be >=0',
    ],
    [
      'a TTL above one day',
      { placementReservationTtlSeconds: 86_401 },
      'placementReservationTtlSeconds: Too big: expected number to be <=86400',
    ],
    // Node's timers take at most 2^31 − 1 ms: a longer interval would crash start-up without naming the key.
    [
      'a snapshot poll interval of 1e10 ms',
      { snapshot: { pollIntervalMs: 1e10 } },
      'snapshot.pollIntervalMs: Too big: expected number to be <=86400000',
    ],
    [
      'a TLS reload interval of 1e12 ms',
      { server: { tls: { certFile: 'c.pem', keyFile: 'k.pem', reloadIntervalMs: 1e12 } } },
      'server.tls.reloadIntervalMs: Too big: expected number to be <=86400000',
    ],
    // Regression (new-user trial): zod's "expected string, received undefined" did not say the key was missing.
    [
      'server.tls without keyFile',
      { server: { tls: { certFile: 'c.pem' } } },
      "server.tls.keyFile: required: the certificate's private key, a PEM file (server.tls takes certFile and keyFile)",
    ],
    [
      'server.tls without certFile',
      { server: { tls: { keyFile: 'k.pem' } } },
      "server.tls.certFile: required: the server certificate's PEM file (server.tls takes certFile and keyFile)",
    ],
    [
      'a kubeconfig and a snapshot path (two modes)',
      { kubeconfig: 'kc', snapshot: { path: 'nodes.json' } },
      'kubeconfig: kubeconfig (cluster mode) and snapshot.path (snapshot mode) pick different modes: set one (a flag counts as setting it)',
    ],
    [
      'a keyFile that is not a string',
      { server: { tls: { certFile: 'c.pem', keyFile: 5 } } },
      'server.tls.keyFile: Invalid input: expected string, received number',
    ],
    [
      'a keep-alive timeout of 1e9 s',
      { server: { keepAliveTimeoutSeconds: 1e9 } },
      'server.keepAliveTimeoutSeconds: Too big: expected number to be <=86400',
    ],
    [
      'an empty schedulerName',
      { schedulerName: '' },
      'schedulerName: Too small: expected string to have >=1 characters',
    ],
    ['an unknown top-level key', { strategyy: 'random' }, '(root): Unrecognized key: "strategyy"'],
    ['an unknown snapshot key', { snapshot: { file: 'x' } }, 'snapshot: Unrecognized key: "file"'],
    [
      'a starting limit of 0 per node',
      { startingLimit: { perNode: 0 } },
      'startingLimit.perNode: Too small: expected number to be >=1',
    ],
    [
      'a fractional starting limit per node',
      { startingLimit: { perNode: 2.5 } },
      'startingLimit.perNode: Invalid input: expected int, received number',
    ],
    [
      'a starting limit per core of 0',
      { startingLimit: { perCore: 0 } },
      'startingLimit.perCore: Too small: expected number to be >0',
    ],
    [
      'a starting limit per core with four decimals',
      { startingLimit: { perCore: 0.0625 } },
      'startingLimit.perCore: must have at most three decimals (e.g. 0.125)',
    ],
    [
      'a starting limit per core without cpu in dimensions',
      { dimensions: ['memory'], startingLimit: { perCore: 0.5 } },
      'startingLimit.perCore: startingLimit.perCore counts cores of allocatable cpu: add cpu to dimensions',
    ],
    ['an unknown startingLimit key', { startingLimit: { perCpu: 1 } }, 'startingLimit: Unrecognized key: "perCpu"'],
    [
      'a locality band above 1',
      { locality: { pressureBand: 1.5 } },
      'locality.pressureBand: Too big: expected number to be <=1',
    ],
    [
      'a negative locality band',
      { locality: { pressureBand: -0.1 } },
      'locality.pressureBand: Too small: expected number to be >=0',
    ],
    [
      'no images kept per node',
      { locality: { maxImagesPerNode: 0 } },
      'locality.maxImagesPerNode: Too small: expected number to be >=1',
    ],
    [
      'a template label that is no label key',
      { locality: { templateLabel: 'not a key' } },
      'locality.templateLabel: must be a Kubernetes label key such as sandbox-extender.io/paused',
    ],
    [
      'a locality TTL of 0',
      { locality: { ttlSeconds: 0 } },
      'locality.ttlSeconds: Too small: expected number to be >0',
    ],
    [
      "kube-scheduler's percentageOfNodesToScore above 100",
      { kubeScheduler: { percentageOfNodesToScore: 101 } },
      'kubeScheduler.percentageOfNodesToScore: Too big: expected number to be <=100',
    ],
    [
      'a negative percentageOfNodesToScore',
      { kubeScheduler: { percentageOfNodesToScore: -1 } },
      'kubeScheduler.percentageOfNodesToScore: Too small: expected number to be >=0',
    ],
    [
      'a fractional percentageOfNodesToScore',
      { kubeScheduler: { percentageOfNodesToScore: 42.5 } },
      'kubeScheduler.percentageOfNodesToScore: Invalid input: expected int, received number',
    ],
    [
      'percentageOfNodesToScore as a string',
      { kubeScheduler: { percentageOfNodesToScore: '50' } },
      'kubeScheduler.percentageOfNodesToScore: Invalid input: expected number, received string',
    ],
    [
      'an unknown kubeScheduler key',
      { kubeScheduler: { percentage: 50 } },
      'kubeScheduler: Unrecognized key: "percentage"',
    ],
    [
      'a zero staleness bound',
      { watch: { maxBrokenSeconds: 0 } },
      'watch.maxBrokenSeconds: Too small: expected number to be >0',
    ],
  ])('%s', (_name, input, issue) => {
    expect(configError(() => parseConfig(input)).issues).toEqual([issue]);
  });
});

// Regression (new-user trial): `--host 999.1.1.1` passed the config and failed at listen (getaddrinfo ENOTFOUND, exit 1).
describe('server.host is an IP address or a hostname', () => {
  it.each([
    ['127.0.0.1'],
    ['0.0.0.0'],
    ['::'],
    ['::1'],
    ['fe80::1%eth0'],
    ['localhost'],
    ['extender.kube-system.svc.cluster.local'],
    ['extender.example.'],
    ['node-1'],
  ])('%s is valid', (host) => {
    expect(parseConfig({ server: { host } }).server.host).toBe(host);
  });

  const refused = (host: string) =>
    `server.host: must be an IP address (127.0.0.1, 0.0.0.0, ::1, ::) or a hostname (localhost), not ${JSON.stringify(host)}`;
  it.each([
    ['an IPv4 part above 255', '999.1.1.1'],
    ['three parts', '1.2.3'],
    ['a short form', '127.1'],
    ['empty', ''],
    ['a URL', 'http://0.0.0.0'],
    ['a port in it', '127.0.0.1:8888'],
    ['an underscore', 'my_host'],
    ['a label starting with a hyphen', '-node'],
  ])('%s (%j) is refused', (_name, host) => {
    expect(thrown(ConfigError, () => parseConfig({ server: { host } })).issues).toEqual([refused(host)]);
  });

  it('an IPv6 address in brackets is refused with the address to write', () => {
    expect(thrown(ConfigError, () => parseConfig({ server: { host: '[::1]' } })).issues).toEqual([
      'server.host: must be written without brackets (::1), not "[::1]"',
    ]);
  });
});

describe('a removed setting is refused with what to do, not run without it', () => {
  const REMOVED =
    'apiWorker: no longer a setting: the API side (lists, watches, Events, Bindings) always runs on a worker thread; delete this line';
  const REMOVED_WARM_UP =
    'warmUpDecisions: no longer a setting: the extender no longer warms up before serving (it did not make the first calls after a start faster); delete this line';

  it.each([
    ['apiWorker: true', REMOVED],
    ['apiWorker: false', REMOVED],
    ['warmUpDecisions: 500', REMOVED_WARM_UP],
    ['warmUpDecisions: 0', REMOVED_WARM_UP],
  ])('%s in a file: refused, naming the file, whatever its value', (line, removed) => {
    const path = yamlFile(`strategy: most_loaded\n${line}\n`);
    const err = configError(() => loadConfig(path));
    expect(err.source).toBe(path);
    expect(err.issues).toEqual([removed]);
    expect(err.message).toContain(`  - ${removed}`);
  });

  it('listed once among the other problems, without the schema’s "Unrecognized key" for it', () => {
    const err = configError(() => parseConfig({ apiWorker: true, strategy: 'fastest', extra: 1 }));
    expect([...err.issues].sort()).toEqual(
      [
        REMOVED,
        'strategy: Invalid option: expected one of "least_loaded"|"most_loaded"|"round_robin"|"random"',
        '(root): Unrecognized key: "extra"',
      ].sort(),
    );
  });

  it('two removed settings at once: each listed once', () => {
    const err = configError(() => parseConfig({ apiWorker: true, warmUpDecisions: 0 }));
    expect([...err.issues].sort()).toEqual([REMOVED, REMOVED_WARM_UP].sort());
  });

  it.each([['apiWorker'], ['warmUpDecisions']])(
    '%s is no key of the schema, nor of the JSON Schema the chart validates its values with',
    (key) => {
      expect(Object.keys(configSchema.shape)).not.toContain(key);
      expect(Object.keys((configJsonSchema() as { properties: object }).properties)).not.toContain(key);
    },
  );
});

describe('flags override file values', () => {
  it('flags win, file values not overridden are kept (deep merge of server and snapshot)', () => {
    const path = yamlFile(
      [
        'strategy: most_loaded',
        'server:',
        '  host: 0.0.0.0',
        '  port: 9000',
        'snapshot:',
        '  path: /from/file.json',
        '  pollIntervalMs: 250',
      ].join('\n'),
    );
    const config = loadConfig(path, {
      strategy: 'round_robin',
      server: { port: 1234 },
      snapshot: { path: '/from/flag.json' },
    });
    expect(config.strategy).toBe('round_robin');
    expect(config.server).toEqual({
      host: '0.0.0.0',
      port: 1234,
      maxRequestBodyBytes: 64 * 1024 * 1024,
      maxRequestDepth: 100,
      maxRequestElements: 4_000_000,
      maxObjectMembers: 10_000,
      keepAliveTimeoutSeconds: 120,
      requestTimeoutSeconds: 30,
      requestLogWindowSeconds: 60,
    });
    expect(config.snapshot).toEqual({ path: '/from/flag.json', pollIntervalMs: 250 });
  });

  it('a flag over a bad file value does not hide the bad value (--port over server.port: 99999)', () => {
    const path = yamlFile(['server:', '  port: 99999'].join('\n'));
    expect(() => loadConfig(path, { server: { port: 1234 } })).toThrow(ConfigError);
    expect(() => loadConfig(path, { server: { port: 1234 } })).toThrow(
      /server\.port: Too big: expected number to be <=65535/,
    );
  });

  it('undefined flags (options not given on the command line) do not clobber file values', () => {
    const path = yamlFile(['strategy: most_loaded', 'server:', '  port: 9000'].join('\n'));
    const config = loadConfig(path, {
      strategy: undefined,
      server: { port: undefined, host: undefined },
      snapshot: { path: undefined },
    });
    expect(config.strategy).toBe('most_loaded');
    expect(config.server.port).toBe(9000);
    expect(config.snapshot.path).toBeUndefined();
  });

  it('overrides without a file apply on top of the defaults', () => {
    expect(loadConfig(undefined, { strategy: 'random', randomSeed: 7 })).toEqual({
      ...DEFAULTS,
      strategy: 'random',
      randomSeed: 7,
    });
  });

  it('an invalid override is reported like a file value, with source "flags" when there is no file', () => {
    const err = configError(() => loadConfig(undefined, { server: { port: 70_000 } }));
    expect(err.source).toBe('flags');
    expect(err.issues).toEqual(['server.port: Too big: expected number to be <=65535']);
  });

  it('an override does not cover an invalid file value: the file is checked on its own first', () => {
    const path = yamlFile('strategy: fastest\n');
    expect(() => loadConfig(path, { strategy: 'least_loaded' })).toThrow(/strategy: Invalid option/);
  });
});

describe('unreadable or malformed files', () => {
  it('invalid YAML → one issue "not valid YAML" with the parser position', () => {
    const path = yamlFile('strategy: [least_loaded\nserver:\n  port: 1\n');
    const err = configError(() => loadConfig(path));
    expect(err.source).toBe(path);
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatch(/^not valid YAML: .*line \d+, column \d+/s);
  });

  it('duplicate keys are invalid YAML', () => {
    expect(configError(() => loadConfig(yamlFile('strategy: random\nstrategy: least_loaded\n'))).issues[0]).toMatch(
      /^not valid YAML: .*unique/is,
    );
  });

  it.each([
    ['a YAML list', '- strategy: random\n'],
    ['a bare string', 'least_loaded\n'],
    ['a number', '42\n'],
  ])('a document that is %s, not a mapping → "(root): expected a mapping of settings"', (_name, text) => {
    expect(configError(() => loadConfig(yamlFile(text))).issues).toEqual(['(root): expected a mapping of settings']);
  });

  it('a missing file → "cannot read the file" naming the error', () => {
    const path = join(dir, 'does-not-exist.yaml');
    const err = configError(() => loadConfig(path));
    expect(err.source).toBe(path);
    expect(err.issues).toEqual([expect.stringMatching(/^cannot read the file: ENOENT/)]);
  });

  it('a directory → "cannot read the file" (EISDIR)', () => {
    expect(configError(() => loadConfig(dir)).issues).toEqual([expect.stringMatching(/^cannot read the file: EISDIR/)]);
  });

  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  (asRoot ? it.skip : it)(
    'a file without read permission → "cannot read the file" (EACCES) [skipped as root: root reads anything]',
    () => {
      const path = yamlFile('strategy: random\n');
      chmodSync(path, 0o000);
      expect(configError(() => loadConfig(path)).issues).toEqual([
        expect.stringMatching(/^cannot read the file: EACCES/),
      ]);
    },
  );
});

describe('JSON Schema of the config file', () => {
  it('lists every top-level key, forbids others, and carries the defaults', () => {
    const schema = configJsonSchema() as {
      type: string;
      properties: Record<string, { default?: unknown }>;
      additionalProperties: boolean;
    };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(configSchema.shape).sort());
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties['strategy']!.default).toBe('least_loaded');
  });
});
