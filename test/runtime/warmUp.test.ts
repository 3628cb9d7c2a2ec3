/**
 * The warm-up before serving (src/runtime/warmUp.ts): it places pods on a scratch copy of its own, with
 * the configuration's strategy and limits, and leaves the server's cache and metrics untouched.
 */
import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import { serve } from '../../src/runtime/serve.js';
import { WARM_UP_NODES, warmUp } from '../../src/runtime/warmUp.js';
import { SNAPSHOT_PATH } from '../server/harness.js';

describe('warmUp', () => {
  it('places every decision it makes on its scratch nodes (the Filter path ran, end to end)', () => {
    const result = warmUp(parseConfig({ logLevel: 'silent' }), 120);
    expect(result.placed).toBe(120);
    expect(result.ms).toBeGreaterThan(0);
  });

  it('runs with any configuration: another strategy, extra dimensions, a starting limit', () => {
    const config = parseConfig({ strategy: 'most_loaded', dimensions: ['cpu', 'memory', 'nvidia.com/gpu', 'pods'], startingLimit: { perNode: 1 }, logLevel: 'silent' });
    // most_loaded packs: with a limit of one starting sandbox per node each decision still finds a node (fewer decisions than nodes).
    expect(warmUp(config, 50).placed).toBe(50);
    expect(WARM_UP_NODES).toBeGreaterThan(50);
  });

  it('serve warms up before listening and its own cache and metrics show none of it', async () => {
    const config = parseConfig({ snapshot: { path: SNAPSHOT_PATH }, server: { port: 0 }, warmUpDecisions: 200, logLevel: 'silent' });
    const server = await serve(config, pino({ level: 'silent' }));
    try {
      const size = server.service.cache.size;
      expect(size.reservations).toBe(0);
      expect([...server.service.cache.nodeNames()].some((n) => n.startsWith('warm-up'))).toBe(false);
      const metrics = await server.metrics.registry.metrics();
      expect(metrics).toMatch(/^sandbox_extender_reservations_pending 0$/m);
      expect(metrics).not.toMatch(/sandbox_extender_placements_total\{[^}]*\} [1-9]/);
    } finally {
      await server.close();
    }
  });
});
