#!/usr/bin/env bash
# The e2e tier, as CI runs it (from .ci/run): build the control-plane tools if the cache lacks them, install
# Prometheus from Debian's packages if missing (test/e2e/prometheus.sh), build the extender, start the cluster (extender in cluster mode, bind on), run the jest project "e2e" against it, check
# that the API server never refused the extender a request (403), and always stop the cluster on exit.
# Prints the time of each step, the cache's disk use, and a closing "e2e: N passed, N failed" line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

t0=$SECONDS
step() { e2e_log "== $1 ($((SECONDS - t0))s elapsed)"; }

on_exit() {
  local rc=$?
  set +e
  if [ "$rc" -ne 0 ] && [ -d "$E2E_STATE/logs" ]; then
    local logs=() n
    for n in etcd kube-apiserver kube-controller-manager kwok snapshot-feeder sandbox-extender prometheus \
             kube-scheduler-sandbox kube-scheduler-default agent-sandbox-controller; do
      logs+=("$E2E_STATE/logs/$n.log")
    done
    # install.e2e.test.ts's cluster of its own: the real nodes and the README block's transcript.
    logs+=("$REPO_ROOT"/.cache/e2e-install/logs/{kubelet-real-*,containerd-real-*}.log
           "$REPO_ROOT"/.cache/e2e-install/logs/readme-helm-block.txt)
    for f in "${logs[@]}"; do
      [ -s "$f" ] || continue
      echo "----- last lines of ${f#"$REPO_ROOT"/}" >&2
      tail -n 25 "$f" >&2
    done
  fi
  "$E2E_DIR/cluster-down.sh" --keep-logs >&2
  e2e_log "e2e tier finished in $((SECONDS - t0))s (exit $rc)"
  exit "$rc"
}
trap on_exit EXIT

step "control-plane tools"
"$E2E_DIR/build-tools.sh"
du -sh "$E2E_CACHE" >&2 || true

step "prometheus and promtool (Debian package; installed when missing)"
"$E2E_DIR/prometheus.sh" install

step "extender build (npm run build)"
npm run build --silent

step "cluster up"
EXTENDER_BUILD=0 CLUSTER=examples/cluster/heterogeneous.yaml "$E2E_DIR/cluster-up.sh"

step "jest --selectProjects e2e"
mkdir -p "$E2E_STATE/logs"
results=$E2E_STATE/logs/jest-e2e.json
rm -f "$results"
set +e
E2E_REUSE_CLUSTER=1 NODE_OPTIONS=--experimental-vm-modules npx jest --selectProjects e2e --runInBand \
  --json --outputFile="$results"
jest_rc=$?
set -e
if [ -f "$results" ]; then
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const files = r.testResults.map((t) => ({ s: (t.endTime - t.startTime) / 1000, name: require("path").relative(process.cwd(), t.name), n: t.assertionResults.length }));
    console.error("e2e cost per file (s, slowest first):");
    for (const f of files.sort((a, b) => b.s - a.s)) console.error(`  ${f.s.toFixed(0).padStart(5)}  ${f.name} (${f.n} tests)`);
    console.log(`e2e: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
    if (r.numTotalTests === 0) process.exitCode = 1;' "$results" || jest_rc=1
fi
# Whatever the tests did, the extender (its own user, least-privilege RBAC) must never have been refused by the API.
if forbidden=$(e2e_forbidden "$E2E_LOGS/sandbox-extender.log"); then
  echo "$forbidden" >&2
  e2e_log "the API server refused the extender requests (above): test/e2e/manifests/sandbox-extender-rbac.yaml lacks a permission"
  jest_rc=1
else
  e2e_log "extender log: no request refused by the API server (no 403)"
fi
exit "$jest_rc"
