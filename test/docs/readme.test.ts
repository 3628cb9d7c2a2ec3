import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { createApp } from '../../src/server/app.js';
import { buildExtender } from '../../src/runtime/extender.js';

// The README's KubeSchedulerConfiguration must match the server: same address, verbs that exist,
// the protocol's required fields, and the extender's default schedulerName as the profile.
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .find((b) => b.includes('KubeSchedulerConfiguration'));

interface Extender {
  urlPrefix: string;
  filterVerb: string;
  prioritizeVerb: string;
  weight: number;
  nodeCacheCapable: boolean;
}

describe('README extender configuration', () => {
  const doc = parseYaml(block ?? '') as {
    apiVersion: string;
    profiles: { schedulerName: string }[];
    extenders: Extender[];
  };
  const config = parseConfig({});
  const extender = doc.extenders[0]!;

  it('is a v1 KubeSchedulerConfiguration for the extender’s scheduler name', () => {
    expect(doc.apiVersion).toBe('kubescheduler.config.k8s.io/v1');
    expect(doc.profiles.map((p) => p.schedulerName)).toEqual([config.schedulerName]);
  });

  it('points at the default listen address and sets the fields kube-scheduler requires', () => {
    const url = new URL(extender.urlPrefix);
    expect([url.hostname, Number(url.port)]).toEqual([config.server.host, config.server.port]);
    expect(extender.weight).toBeGreaterThan(0);
    expect(extender.nodeCacheCapable).toBe(true);
  });

  it.each(['filterVerb', 'prioritizeVerb'] as const)('%s names a route the server answers', async (field) => {
    const { service, metrics } = buildExtender(config);
    const app = createApp(
      { service, metrics, pausedLabel: config.pausedLabel, logger: pino({ level: 'silent' }), now: () => 0 },
      {
        maxRequestBodyBytes: 1e6,
        maxRequestDepth: config.server.maxRequestDepth,
        maxRequestElements: config.server.maxRequestElements,
      },
    );
    const path = `${new URL(extender.urlPrefix).pathname.replace(/\/$/, '')}/${extender[field]}`;
    const res = await request(app)
      .post(path)
      .send({ Pod: { metadata: { name: 'p', uid: 'u' }, spec: {} }, NodeNames: [] });
    expect(res.status).toBe(200);
  });
});

// The README is what a newcomer reads in five minutes; detail belongs in docs/.
describe('README size', () => {
  it('stays within 16 KB', () => {
    expect(Buffer.byteLength(readme, 'utf8')).toBeLessThanOrEqual(16 * 1024);
  });
});
