/**
 * The setups the two template-locality benchmarks compare, locality.ts (KWOK nodes, modelled pulls) and
 * timeToReady.ts (real nodes, real pulls): the stock default-scheduler, and sandbox-scheduler with template
 * locality off / on and the starting limit off / on; their names in the tables, the extender configuration of
 * each, and the extender's placements by locality over a run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchText, REPO_ROOT, sumCounterBy } from '../test/e2e/kit/controlPlane.js';

export type Setup = 'stock' | 'off' | 'on' | 'off+limit' | 'on+limit';
export const SETUPS: readonly Setup[] = ['stock', 'off', 'on', 'off+limit', 'on+limit'];
export const LABELS: Record<Setup, string> = {
  stock: 'stock default-scheduler',
  off: 'locality off',
  on: 'locality on',
  'off+limit': 'locality off, limit',
  'on+limit': 'locality on, limit',
};

/** The extender configuration file of each sandbox setup. */
export type SetupConfigs = Record<Exclude<Setup, 'stock'>, string>;

/**
 * Writes the extender configuration of each sandbox setup to .e2e-bench/`prefix`-SETUP.yaml (`+` as `-`): template
 * locality on with pressureBand `band` or off, startingLimit.perNode `perNode` or no limit, Events off.
 */
export function writeSetupConfigs(
  prefix: string,
  o: { readonly band: number; readonly perNode: number },
): SetupConfigs {
  const dir = join(REPO_ROOT, '.e2e-bench');
  mkdirSync(dir, { recursive: true });
  const configs = {} as SetupConfigs;
  for (const s of SETUPS) {
    if (s === 'stock') continue;
    const file = join(dir, `${prefix}-${s.replace('+', '-')}.yaml`);
    const locality = s.startsWith('on') ? `{enabled: true, pressureBand: ${o.band}}` : '{enabled: false}';
    const limit = s.endsWith('limit') ? `{perNode: ${o.perNode}}` : '{}';
    writeFileSync(file, `locality: ${locality}\nstartingLimit: ${limit}\nevents: {enabled: false}\n`);
    configs[s] = file;
  }
  return configs;
}

/**
 * Reads the extender's sandbox_extender_placements_by_locality_total at `url` now; the function returned reads it
 * again and gives the growth of each locality since.
 */
export async function localityPlacementsSince(url: string): Promise<() => Promise<Record<string, number>>> {
  const read = async () =>
    sumCounterBy(await fetchText(`${url}/metrics`), 'sandbox_extender_placements_by_locality_total', 'locality');
  const before = await read();
  return async () => Object.fromEntries([...(await read())].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}
