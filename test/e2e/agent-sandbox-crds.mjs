#!/usr/bin/env node
/**
 * The agent-sandbox CRDs as the e2e cluster serves them: reads the module's published CRD files (YAML, one
 * CustomResourceDefinition each) and prints one JSON List of them on stdout, each rewritten so that
 *
 * - only the version `v1beta1` is left (served and stored), the one every controller of the module uses;
 * - `spec.conversion` is `{strategy: None}`.
 *
 * Why: nothing here can serve a conversion webhook. The API server would reach one through the ClusterIP of an
 * in-cluster Service, which nothing routes on a control plane without kube-proxy, and the controller runs outside
 * the cluster (v1.0.1 has no webhook server at all). v1.0.1 publishes its CRDs at v1beta1 only, with no
 * `conversion` (None, the API server's default), so for them the rewrite changes nothing but spelling that default
 * out; v0.5.6 published v1alpha1 and v1beta1 converted by a webhook behind
 * `agent-sandbox-system/agent-sandbox-webhook-service`, and such a CRD would be served here at v1beta1 only (a
 * request for another version answered 404) instead of failing at conversion.
 *
 *   node test/e2e/agent-sandbox-crds.mjs CRD.yaml... | kubectl apply --server-side -f -
 *
 * Exits 1 with a message when a file is not a CRD or has no v1beta1 version.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const SERVED = 'v1beta1';

/**
 * One CRD, served at v1beta1 only with conversion None. @throws Error naming the file when it is not a
 * CustomResourceDefinition or has no v1beta1 version.
 */
function servedAtOneVersion(crd, file) {
  if (crd?.kind !== 'CustomResourceDefinition')
    throw new Error(`${file}: not a CustomResourceDefinition (kind ${crd?.kind})`);
  const version = (crd.spec?.versions ?? []).find((v) => v.name === SERVED);
  if (!version)
    throw new Error(`${file}: no version ${SERVED} (has ${(crd.spec?.versions ?? []).map((v) => v.name).join(', ')})`);
  return {
    ...crd,
    spec: { ...crd.spec, versions: [{ ...version, served: true, storage: true }], conversion: { strategy: 'None' } },
  };
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: agent-sandbox-crds.mjs CRD.yaml...');
  process.exit(1);
}
try {
  const items = files.map((f) => servedAtOneVersion(parse(readFileSync(f, 'utf8')), f));
  process.stdout.write(JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
