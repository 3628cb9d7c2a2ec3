/**
 * The documentation's blocks marked `<!-- runnable: e2e -->` (test/docs/runnable.ts), run against the running
 * cluster: from the repository root, in a clean environment plus KUBECONFIG (the cluster's admin kubeconfig) and
 * PATH with the cluster's tools (.e2e/bin: kubectl, helm) and promtool. Each must exit 0 (a transcript: print what
 * it shows). The unit-tier blocks run in test/docs/runnable.test.ts.
 */
import { join } from 'node:path';
import { allRunnableBlocks, runBlock } from '../docs/runnable.js';
import { SETUP_TIMEOUT_MS, STATE_DIR, setUpCluster, tearDownCluster, type ClusterEnv } from './kit/controlPlane.js';

let env: ClusterEnv;
beforeAll(async () => {
  env = await setUpCluster();
}, SETUP_TIMEOUT_MS);
afterAll(async () => {
  await tearDownCluster();
}, 120_000);

const blocks = allRunnableBlocks().filter((b) => b.tier === 'e2e');

describe('runnable documentation blocks (e2e tier)', () => {
  it('there are some', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.each(blocks.map((b) => [b.where, b] as const))(
    '%s',
    (_where, block) => {
      const results = runBlock(
        block,
        { KUBECONFIG: env.KUBECONFIG, PATH: `${join(STATE_DIR, 'bin')}:${process.env.PATH}` },
        120_000,
      );
      for (const r of results) {
        const detail = `$ ${r.command}\n--- exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
        process.stderr.write(`[docs e2e] ${block.where}: exit ${r.status}\n`);
        expect([r.status, r.matches === false ? 'output differs' : 'ok', detail]).toEqual([0, 'ok', detail]);
      }
    },
    240_000,
  );
});
