// The runtime image's node_modules against the repository's package-lock.json: exactly the production packages
// (the lock's entries without a dev, optional or devOptional flag), none of the dev ones. Reads the image's
// installed package folders (paths like node_modules/a or node_modules/@s/b/node_modules/c, one per line) on stdin.
//
//   docker run --entrypoint node IMAGE -e "<lister>" | node test/image/check-node-modules.mjs package-lock.json
import { readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync(process.argv[2] ?? 'package-lock.json', 'utf8'));
const installed = new Set(readFileSync(0, 'utf8').split('\n').filter(Boolean));
const entries = Object.entries(lock.packages).filter(([path]) => path !== '');
const production = entries.filter(([, p]) => !p.dev && !p.optional && !p.devOptional).map(([path]) => path);
const dev = new Set(entries.filter(([, p]) => p.dev).map(([path]) => path));
const devInImage = [...installed].filter((p) => dev.has(p));
const missing = production.filter((p) => !installed.has(p));
const unknown = [...installed].filter((p) => !lock.packages[p]);
const problems = [
  devInImage.length && `dev packages in the image: ${devInImage.join(', ')}`,
  missing.length && `production packages missing from the image: ${missing.join(', ')}`,
  unknown.length && `packages in the image that the lock does not name: ${unknown.join(', ')}`,
].filter(Boolean);
if (problems.length) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(
  `${installed.size} packages, the lock's ${production.length} production packages exactly, none of its ${dev.size} dev packages\n`,
);
