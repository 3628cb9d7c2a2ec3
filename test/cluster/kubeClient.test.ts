/**
 * loadKubeConfig (src/cluster/kubeClient.ts): kubectl's search order, and no silent fallback to
 * http://localhost:8080 when nothing is found (client-node's loadFromDefault does that).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig } from '../../src/cluster/kubeClient.js';
import { NoKubeConfigError } from '../../src/cluster/kubeConfigError.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: c1, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u1, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c1, user: u1}}]
current-context: ctx
`;

let dir: string;
const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-kube-'));
  process.env.HOME = dir;
  delete process.env.KUBECONFIG;
});
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(dir, { recursive: true, force: true });
});

const inCluster = existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token');

describe('loadKubeConfig', () => {
  (inCluster ? it.skip : it)(
    'no $KUBECONFIG, no ~/.kube/config, not in a pod → NoKubeConfigError (not localhost:8080)',
    () => {
      expect(() => loadKubeConfig()).toThrow(NoKubeConfigError);
      expect(() => loadKubeConfig()).toThrow(
        /^no kubeconfig found: \$KUBECONFIG is not set, ~\/\.kube\/config does not exist/,
      );
    },
  );

  (inCluster ? it.skip : it)('an empty $KUBECONFIG counts as unset', () => {
    process.env.KUBECONFIG = '';
    expect(() => loadKubeConfig()).toThrow(NoKubeConfigError);
  });

  it('a named kubeconfig that is missing or names no cluster → NoKubeConfigError with the path (the CLI exits 2)', () => {
    const missing = join(dir, 'none');
    expect(() => loadKubeConfig(missing)).toThrow(NoKubeConfigError);
    expect(() => loadKubeConfig(missing)).toThrow(`cannot read the kubeconfig ${missing}: ENOENT`);
    const empty = join(dir, 'empty-kubeconfig');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => loadKubeConfig(empty)).toThrow(
      new NoKubeConfigError(`no cluster in the kubeconfig ${empty} (or in-cluster environment)`),
    );
  });

  it('~/.kube/config is used when present', () => {
    mkdirSync(join(dir, '.kube'));
    writeFileSync(join(dir, '.kube', 'config'), KUBECONFIG);
    expect(loadKubeConfig().getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it('$KUBECONFIG wins, and a kubeconfig that really points at localhost:8080 is accepted', () => {
    const path = join(dir, 'local.yaml');
    writeFileSync(path, KUBECONFIG.replace('https://127.0.0.1:6443', 'http://localhost:8080'));
    process.env.KUBECONFIG = path;
    expect(loadKubeConfig().getCurrentCluster()?.server).toBe('http://localhost:8080');
  });

  it('an explicit path that does not exist is an error naming it', () => {
    expect(() => loadKubeConfig(join(dir, 'nope.yaml'))).toThrow(/nope\.yaml/);
  });
});
