#!/usr/bin/env node
// Turns a cluster description (examples/cluster/README.md) into fake Node objects for KWOK and prints them
// as one v1 List (JSON) on stdout, for `kubectl create -f -`.
//
//   node test/e2e/cluster-nodes.mjs examples/cluster/heterogeneous.yaml
//   node test/e2e/cluster-nodes.mjs --nodes 16,64,192          # one node each of 16/64/192 CPUs, 4 GiB per CPU
//   node test/e2e/cluster-nodes.mjs --nodes 1000x32/128Gi      # 1,000 nodes of 32 CPUs / 128 GiB
//   node test/e2e/cluster-nodes.mjs --summary FILE             # one line per group instead of the List
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';

const KWOK_ANNOTATION = 'kwok.x-k8s.io/node';
const EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
const QUANTITY = /^([+-]?[0-9.]+)([eE][+-]?[0-9]+|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

class DescriptionError extends Error {}
const fail = (where, msg) => {
  throw new DescriptionError(`${where}: ${msg}`);
};

/** Parses the shorthand "[COUNTx]CPUS[/MEMORY],…" (memory defaults to 4Gi per CPU). */
export function parseShorthand(spec) {
  const used = new Map();
  const nodeGroups = spec.split(',').map((part, i) => {
    const m = /^\s*(?:(\d+)\s*[x×*]\s*)?(\d+)\s*(?:cpus?)?\s*(?:\/\s*([0-9.]+[A-Za-z]*))?\s*$/.exec(part);
    if (!m) fail(`--nodes entry ${i + 1} "${part}"`, 'expected [COUNTx]CPUS[/MEMORY], e.g. 1000x32/128Gi or 16');
    const [, count = '1', cpu, memory = `${Number(cpu) * 4}Gi`] = m;
    const base = `cpu${cpu}`;
    const n = (used.get(base) ?? 0) + 1;
    used.set(base, n);
    return { namePrefix: n === 1 ? base : `${base}-g${n}`, count: Number(count), allocatable: { cpu, memory } };
  });
  return { nodeGroups };
}

function checkQuantities(where, obj) {
  if (obj === undefined) return {};
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
    fail(where, 'must be a map of resource name to quantity');
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    const s = String(v);
    if (!QUANTITY.test(s)) fail(`${where}.${k}`, `"${s}" is not a Kubernetes quantity`);
    out[k] = s;
  }
  return out;
}

function checkStringMap(where, obj) {
  if (obj === undefined || obj === null) return {};
  if (typeof obj !== 'object' || Array.isArray(obj)) fail(where, 'must be a map of string to string');
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, String(v)]));
}

/** Expands a parsed description into Node objects. */
export function nodesFromDescription(desc, source = 'description') {
  if (!desc || typeof desc !== 'object') fail(source, 'empty or not a map');
  const groups = desc.nodeGroups;
  if (!Array.isArray(groups) || groups.length === 0) fail(source, 'needs a non-empty list "nodeGroups"');
  const defaults = desc.defaults ?? {};
  const defLabels = checkStringMap(`${source}: defaults.labels`, defaults.labels);
  const defAnnotations = checkStringMap(`${source}: defaults.annotations`, defaults.annotations);
  const names = new Set();
  const nodes = [];
  groups.forEach((g, gi) => {
    const where = `${source}: nodeGroups[${gi}]`;
    const prefix = g.namePrefix;
    if (typeof prefix !== 'string' || !DNS_LABEL.test(prefix) || prefix.length > 56) {
      fail(`${where}.namePrefix`, 'required: lower-case letters, digits and "-", at most 56 characters');
    }
    const count = g.count ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > 100_000)
      fail(`${where}.count`, 'must be an integer from 1 to 100000');
    const allocatable = { pods: '110', ...checkQuantities(`${where}.allocatable`, g.allocatable) };
    if (!allocatable.cpu || !allocatable.memory) fail(`${where}.allocatable`, 'needs at least cpu and memory');
    const capacity = { ...allocatable, ...checkQuantities(`${where}.capacity`, g.capacity) };
    const taints = (g.taints ?? []).map((t, ti) => {
      if (!t || typeof t.key !== 'string' || !EFFECTS.has(t.effect)) {
        fail(`${where}.taints[${ti}]`, `needs a key and an effect (${[...EFFECTS].join(', ')})`);
      }
      return t.value === undefined
        ? { key: t.key, effect: t.effect }
        : { key: t.key, value: String(t.value), effect: t.effect };
    });
    const labels = { ...defLabels, ...checkStringMap(`${where}.labels`, g.labels) };
    const annotations = { ...defAnnotations, ...checkStringMap(`${where}.annotations`, g.annotations) };
    const width = String(count - 1).length;
    for (let i = 0; i < count; i++) {
      const name = `${prefix}-${String(i).padStart(width, '0')}`;
      if (names.has(name)) fail(where, `node name ${name} is used twice`);
      names.add(name);
      nodes.push({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: {
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            type: 'kwok',
            ...labels,
          },
          annotations: { [KWOK_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0', ...annotations },
        },
        spec: { ...(taints.length ? { taints } : {}), ...(g.unschedulable ? { unschedulable: true } : {}) },
        status: { allocatable, capacity },
      });
    }
  });
  return nodes;
}

function main(argv) {
  let summary = false;
  let desc;
  let source;
  const args = [...argv];
  while (args.length) {
    const a = args.shift();
    if (a === '--summary') summary = true;
    else if (a === '--nodes') {
      source = `--nodes ${args[0] ?? ''}`;
      desc = parseShorthand(args.shift() ?? '');
    } else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: cluster-nodes.mjs [--summary] (FILE.yaml | --nodes [COUNTx]CPUS[/MEMORY],...)\n');
      return 0;
    } else {
      source = a;
      desc = parse(readFileSync(a, 'utf8'));
    }
  }
  if (!desc) throw new DescriptionError('give a cluster description file or --nodes SPEC (see --help)');
  const nodes = nodesFromDescription(desc, source);
  if (summary) {
    const byShape = new Map();
    for (const n of nodes) {
      const key = `${n.status.allocatable.cpu} CPU / ${n.status.allocatable.memory}`;
      byShape.set(key, (byShape.get(key) ?? 0) + 1);
    }
    process.stdout.write(`${nodes.length} nodes: ${[...byShape].map(([k, c]) => `${c} × ${k}`).join(', ')}\n`);
  } else {
    process.stdout.write(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: nodes }) + '\n');
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(
      `cluster-nodes: ${err instanceof DescriptionError ? '' : 'cannot read the description: '}${err.message}\n`,
    );
    process.exitCode = 2;
  }
}
