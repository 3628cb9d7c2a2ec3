/**
 * The cluster the in-process benchmarks (bench.ts, ceiling.ts) place pods on: nodes with realistic names and
 * shapes, and sandbox pods of 250m / 512Mi.
 */
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';

/** Realistic node names, 30–60 characters: EKS, GKE and AKS styles in turn. */
export function nodeName(i: number): string {
  const a = (i * 7919) % 251;
  const b = (i * 104729) % 253;
  switch (i % 3) {
    case 0:
      return `ip-10-${(i >> 8) & 255}-${a}-${b}.eu-west-1.compute.internal`;
    case 1:
      return `gke-prod-sandbox-pool-${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}-${(i % 1000).toString(36)}x${b}`;
    default:
      return `aks-sandboxpool-${String(38472910 + i).padStart(8, '0')}-vmss${(i % 100000).toString(36).padStart(6, '0')}`;
  }
}

/** Node i: 16, 64 or 192 cores in turn, 4 GiB per core, allocatable a little below capacity, 110 pods. */
export function benchNode(i: number): Node {
  const cpus = [16, 64, 192][i % 3]!;
  const name = nodeName(i);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'node.kubernetes.io/instance-type': `sandbox-${cpus}cpu`,
        'topology.kubernetes.io/zone': `eu-west-1${'abc'[i % 3]}`,
      },
    },
    status: {
      allocatable: {
        cpu: `${cpus * 1000 - 80}m`,
        memory: `${cpus * 4 * 1024 * 1024 - 204800}Ki`,
        pods: '110',
        'ephemeral-storage': '47060071478',
      },
      capacity: {
        cpu: String(cpus),
        memory: `${cpus * 4 * 1024 * 1024}Ki`,
        pods: '110',
        'ephemeral-storage': '98831908Ki',
      },
    },
  };
}

/** A sandbox pod (uid `uid-NAME`, schedulerName sandbox-scheduler) requesting 250m / 512Mi; bound and Ready when `nodeName` is given. */
export function benchPod(name: string, nodeName?: string): Pod {
  return {
    metadata: { name, namespace: 'sandboxes', uid: `uid-${name}`, labels: { app: 'sandbox' } },
    spec: {
      schedulerName: 'sandbox-scheduler',
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: 'sandbox', resources: { requests: { cpu: '250m', memory: '512Mi' } } }],
    },
    status: nodeName ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } : { phase: 'Pending' },
  };
}
