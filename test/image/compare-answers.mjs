// The image's extender against the same source run from the checkout, both serving examples/snapshot.json:
// /healthz and /readyz answer "ok" on both, every request of examples/requests/ (filter-*.json to /filter,
// prioritize-*.json to /prioritize, in name order, so both make the same reservations) gets the same HTTP status
// and the same body from both, a Filter that fits places the pod, and the image's /metrics counts its Filter
// calls. Prints one line per request; exits 1 with the difference otherwise.
//
//   node test/image/compare-answers.mjs IMAGE-URL LOCAL-URL REQUESTS-DIR
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/* global fetch */
const [imageUrl, localUrl, dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: compare-answers.mjs IMAGE-URL LOCAL-URL REQUESTS-DIR\n');
  process.exit(2);
}
const failures = [];
const log = (msg) => process.stdout.write(`[image] ${msg}\n`);

async function get(base, path) {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.text() };
}

for (const path of ['/healthz', '/readyz']) {
  for (const base of [imageUrl, localUrl]) {
    const { status, body } = await get(base, path);
    if (status !== 200 || body.trim() !== 'ok') failures.push(`GET ${base}${path}: HTTP ${status} ${body.trim()}`);
  }
}
log('GET /healthz, /readyz: 200 ok (image and checkout)');

const files = readdirSync(dir)
  .filter((f) => /^(filter|prioritize)-.*\.json$/.test(f))
  .sort();
if (!files.length) failures.push(`no filter-*.json or prioritize-*.json in ${dir}`);
let filters = 0;
let placed = 0;
for (const file of files) {
  const verb = file.split('-')[0];
  const body = readFileSync(join(dir, file), 'utf8');
  const post = async (base) => {
    const res = await fetch(`${base}/${verb}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, body: await res.text() };
  };
  const fromImage = await post(imageUrl);
  const fromSource = await post(localUrl);
  if (fromImage.status !== 200)
    failures.push(`POST /${verb} ${file}: the image answered HTTP ${fromImage.status} ${fromImage.body}`);
  if (fromImage.status !== fromSource.status || fromImage.body !== fromSource.body) {
    failures.push(
      `POST /${verb} ${file}: the image and the checkout differ:\n  image:    ${fromImage.status} ${fromImage.body}\n  checkout: ${fromSource.status} ${fromSource.body}`,
    );
  }
  if (verb === 'filter') {
    filters++;
    const answer = JSON.parse(fromImage.body);
    if (answer.Error) failures.push(`POST /filter ${file}: Error ${answer.Error}`);
    const chosen = answer.NodeNames ?? answer.Nodes?.items?.map((n) => n.metadata.name) ?? [];
    if (chosen.length) placed++;
    log(
      `POST /filter ${file}: ${fromImage.status}, ${chosen.length ? `placed on ${chosen.join(', ')}` : `fits nowhere (${Object.keys(answer.FailedAndUnresolvableNodes ?? {}).length + Object.keys(answer.FailedNodes ?? {}).length} reasons)`}; same answer as the checkout`,
    );
  } else {
    log(`POST /${verb} ${file}: ${fromImage.status} ${fromImage.body.slice(0, 100)}; same answer as the checkout`);
  }
}
if (filters && !placed) failures.push('no Filter request placed its pod (examples/requests has one that fits)');

const metrics = (await get(imageUrl, '/metrics')).body;
const counted = new RegExp(`^sandbox_extender_http_requests_total\\{verb="filter",code="200"\\} ${filters}$`, 'm');
if (!counted.test(metrics))
  failures.push(
    `the image's /metrics does not count ${filters} Filter calls:\n${metrics
      .split('\n')
      .filter((l) => l.includes('http_requests_total'))
      .join('\n')}`,
  );
else log(`GET /metrics: ${filters} Filter calls counted`);

if (failures.length) {
  process.stderr.write(`[image] FAILED:\n${failures.join('\n')}\n`);
  process.exit(1);
}
