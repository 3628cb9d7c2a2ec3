/**
 * docs/agent-sandbox.md: its agent-sandbox objects have the shape the e2e scenarios create with agent-sandbox's
 * controller (bench/agentSandboxObjects.ts: known to work with v1.0.1, as with v0.5.6 before) and name the chart's
 * scheduler; the template hash it quotes is the one agent-sandbox computes for its template; its Helm values exist
 * in the chart and its extender config is valid.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { sandboxClaim, sandboxTemplate, sandboxWarmPool } from '../../bench/agentSandboxObjects.js';
import { parseConfig } from '../../src/config/load.js';

const page = readFileSync(new URL('../../docs/agent-sandbox.md', import.meta.url), 'utf8');
const chartValues = parseYaml(
  readFileSync(new URL('../../charts/sandbox-extender/values.yaml', import.meta.url), 'utf8'),
) as Record<string, unknown>;
const yamlBlocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

type Json = Record<string, unknown>;
const objectsBlock = yamlBlocks.find((b) => b.includes('kind: SandboxTemplate'))!;
const objects = parseAllDocuments(objectsBlock).map((d) => d.toJS() as Json);
const byKind = (kind: string) => objects.find((o) => o.kind === kind)!;
const valuesBlock = parseYaml(yamlBlocks.find((b) => b.startsWith('schedulerName:'))!) as Json;

/** Every key path of a JSON value (array items as `[]`). */
function paths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => paths(v, `${prefix}[]`));
  if (typeof value !== 'object' || value === null) return [prefix];
  return Object.entries(value).flatMap(([k, v]) => [`${prefix}.${k}`, ...paths(v, `${prefix}.${k}`)]);
}

/** agent-sandbox's NameHash: FNV-1a (32 bits) of the name, 8 hex digits (controllers/sandbox_controller.go). */
function nameHash(name: string): string {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(name)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

describe('docs/agent-sandbox.md', () => {
  it('shows a SandboxTemplate, a SandboxWarmPool and a SandboxClaim using only the fields the e2e scenarios create', () => {
    expect(objects.map((o) => o.kind)).toEqual(['SandboxTemplate', 'SandboxWarmPool', 'SandboxClaim']);
    const known = {
      SandboxTemplate: sandboxTemplate({
        name: 't',
        namespace: 'n',
        schedulerName: 's',
        cpu: '1',
        memory: '1Gi',
        labels: { app: 'a' },
        readyDelay: '1s',
      }),
      SandboxWarmPool: sandboxWarmPool('p', 'n', 't', 1),
      SandboxClaim: sandboxClaim('c', 'n', 'p'),
    };
    for (const [kind, built] of Object.entries(known)) {
      const allowed = new Set(paths(built).map((p) => p.replace(/\.labels\.[^.[]+/, '.labels.*')));
      const unknown = paths(byKind(kind))
        .map((p) => p.replace(/\.labels\.[^.[]+/, '.labels.*'))
        .filter((p) => !allowed.has(p));
      expect([kind, unknown]).toEqual([kind, []]);
      expect(byKind(kind).apiVersion).toBe((built as Json).apiVersion);
    }
    // The pool names the template, the claim the pool.
    const template = byKind('SandboxTemplate');
    const pool = byKind('SandboxWarmPool');
    expect((pool.spec as Json).sandboxTemplateRef).toEqual({ name: (template.metadata as Json).name });
    expect((byKind('SandboxClaim').spec as Json).warmPoolRef).toEqual({ name: (pool.metadata as Json).name });
  });

  it("the template's pods name the scheduler the chart installs, in the values shown and by default", () => {
    const podSpec = ((byKind('SandboxTemplate').spec as Json).podTemplate as Json).spec as Json;
    expect(podSpec.schedulerName).toBe(valuesBlock.schedulerName);
    expect(podSpec.schedulerName).toBe(chartValues.schedulerName);
  });

  it("the template hash the page quotes is agent-sandbox's hash of the template's name", () => {
    const name = (byKind('SandboxTemplate').metadata as Json).name as string;
    // what Go's hash/fnv New32a gives for these names (agent-sandbox's GetNumericHash)
    expect([nameHash('e2e-sandbox'), nameHash('python-pool')]).toEqual(['5e3c456b', 'ed572cc4']);
    expect(page).toContain(`\`${name}\` is \`${nameHash(name)}\``);
    expect(page).toContain(`template ${nameHash(name)}, warm pool`);
  });

  it("the Helm values exist in the chart's values.yaml, and extender.config is a valid config file", () => {
    const chartPaths = new Set(paths(chartValues));
    const config = (valuesBlock.extender as Json).config as Json;
    const outside = paths(valuesBlock).filter((p) => !p.startsWith('.extender.config.') && !chartPaths.has(p));
    expect(outside).toEqual([]);
    const parsed = parseConfig({ ...config, schedulerName: valuesBlock.schedulerName });
    expect(parsed.startingLimit).toEqual({ perCore: 0.25 });
    expect(parsed.locality.enabled).toBe(true);
    expect(parsed.locality.templateLabel).toBe('agents.x-k8s.io/sandbox-template-ref-hash');
  });
});
