/**
 * Install scripts of dependencies: npm 11 runs none that package.json's `allowScripts` does not allow, and
 * ends every `npm ci` with a warning naming each package it has no decision for. Every package of the
 * lockfile with an install script must therefore be decided there, and each decision is checked here.
 *
 * @parcel/watcher (jest → @jest/core → jest-haste-map) is denied: its only install script,
 * `node scripts/build-from-source.js`, does nothing unless `npm_config_build_from_source=true` (then it runs
 * node-gyp); the native binding ships prebuilt in the optional package `@parcel/watcher-<platform>`, and
 * jest-haste-map loads it only in watch mode (`jest --watch`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = <T>(path: string) => JSON.parse(readFileSync(ROOT + path, 'utf8')) as T;
const pkg = read<{ allowScripts?: Record<string, boolean> }>('package.json');
const lock = read<{ packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }> }>('package-lock.json');

/** Package names (from their node_modules/... path) of the lockfile entries that have an install script. */
const withInstallScript = Object.entries(lock.packages)
  .filter(([, p]) => p.hasInstallScript)
  .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));

describe('dependency install scripts', () => {
  it('every package with an install script is decided in allowScripts (so npm ci does not warn)', () => {
    expect(withInstallScript.length).toBeGreaterThan(0);
    expect(withInstallScript.filter((name) => !(name in (pkg.allowScripts ?? {})))).toEqual([]);
  });

  it('@parcel/watcher: denied, its script only builds from source on request, and the prebuilt binding loads', () => {
    expect(pkg.allowScripts?.['@parcel/watcher']).toBe(false);
    const require = createRequire(ROOT + 'node_modules/jest-haste-map/package.json');
    const watcherPkg = require.resolve('@parcel/watcher/package.json');
    const manifest = JSON.parse(readFileSync(watcherPkg, 'utf8')) as { scripts: Record<string, string>; optionalDependencies: Record<string, string> };
    const lifecycle = Object.keys(manifest.scripts).filter((s) => ['preinstall', 'install', 'postinstall'].includes(s));
    expect(lifecycle.map((s) => `${s}: ${manifest.scripts[s]}`)).toEqual(['install: node scripts/build-from-source.js']);
    const script = readFileSync(watcherPkg.replace(/package\.json$/, 'scripts/build-from-source.js'), 'utf8');
    expect(script).toMatch(/if \(process\.env\.npm_config_build_from_source === 'true'\) \{\s*build\(\);\s*\}/);
    // What the script would have built is already there: the binding of this platform, from the optional package.
    const watcher = require('@parcel/watcher') as { subscribe?: unknown };
    expect(typeof watcher.subscribe).toBe('function');
  });
});
