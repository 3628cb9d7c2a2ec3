/** One group of the shorthand: its name prefix, its count and each node's allocatable. */
export interface NodeGroup {
  namePrefix: string;
  count: number;
  allocatable: { cpu: string; memory: string };
}
/** Parses the shorthand "[COUNTx]CPUS[/MEMORY],…" (memory defaults to 4Gi per CPU). @throws Error naming the entry. */
export declare function parseShorthand(spec: string): { nodeGroups: NodeGroup[] };
