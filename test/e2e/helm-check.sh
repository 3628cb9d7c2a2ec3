#!/usr/bin/env bash
# The chart's offline proofs, with the real helm and kube-scheduler of the e2e tools build (no cluster needed):
#   1. values.schema.json's extender.config is the extender's own config schema (scripts/values-schema.mjs --check)
#   2. helm lint --strict with the default values and every charts/sandbox-extender/ci/*-values.yaml
#   3. helm template of each value set, checked with the project's code (scripts/check-rendered-chart.mjs:
#      parseConfig on the extender's config file, the KubeSchedulerConfiguration against it, labels, pod security)
#   4. kube-scheduler --write-config-to loads each rendered KubeSchedulerConfiguration and both examples in
#      manifests/examples (strict decoding, validation, building the profiles and extenders), then exits
#   5. values that must fail the install do fail, with the expected message
#   6. manifests/sandbox-extender.yaml is the default rendering (scripts/render-manifests.sh --check)
# Ends with "helm-check: N passed, N failed". Exit 1 on any failure.
#
#   test/e2e/helm-check.sh            (HELM_CHECK_BUILD=0 skips `npm run build`)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

CHART=charts/sandbox-extender
HELM=$E2E_BIN/helm
SCHEDULER=$E2E_BIN/kube-scheduler
for b in "$HELM" "$SCHEDULER"; do
  [ -x "$b" ] || e2e_die "$b not found: build the e2e tools first (bash test/e2e/build-tools.sh, ~12 min cold)"
done
if [ "${HELM_CHECK_BUILD:-1}" != 0 ]; then npm run build --silent; fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/helm-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
bad() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; [ ! -s "$WORK/out" ] || sed 's/^/      /' "$WORK/out" | tail -n 30; }
# check NAME COMMAND...: runs COMMAND, output to $WORK/out (shown on failure).
check() {
  local name=$1; shift
  if "$@" >"$WORK/out" 2>&1; then ok "$name"; else bad "$name"; fi
}

# A kubeconfig and TLS files that exist, for kube-scheduler's config loading (it builds the extenders' TLS
# transports, so their files must exist; nothing is contacted).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=helm-check \
  -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null
cat >"$WORK/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: unused}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
EOF
# load_ksc FILE: kube-scheduler loads FILE, with only its kubeconfig and TLS file paths pointed at the files above.
load_ksc() {
  local in=$1 out=$WORK/ksc-$RANDOM.yaml
  node -e '
    const fs = require("fs"); const { parse, stringify } = require("yaml");
    const [file, kubeconfig, crt, key, out] = process.argv.slice(1);
    const c = parse(fs.readFileSync(file, "utf8"));
    c.clientConnection = { ...c.clientConnection, kubeconfig };
    for (const e of c.extenders ?? []) {
      const t = e.tlsConfig; if (!t) continue;
      if (t.caFile) t.caFile = crt; if (t.certFile) t.certFile = crt; if (t.keyFile) t.keyFile = key;
    }
    fs.writeFileSync(out, stringify(c));' "$in" "$WORK/kubeconfig" "$WORK/tls.crt" "$WORK/tls.key" "$out"
  timeout 60 "$SCHEDULER" --config="$out" --write-config-to="$WORK/ksc-written.yaml" --bind-address=127.0.0.1 --secure-port=0
}

echo "== helm-check: $($HELM version --short), kube-scheduler $($SCHEDULER --version | awk '{print $2}')"

# 1. values schema -------------------------------------------------------------------------------------------
check "values.schema.json extender.config = the extender's config schema" node scripts/values-schema.mjs --check

# 2-4. lint, template, check each value set --------------------------------------------------------------------
value_sets=(default "$CHART"/ci/*-values.yaml)
for vs in "${value_sets[@]}"; do
  name=${vs##*/}; args=()
  [ "$vs" = default ] || args=(-f "$vs")
  check "helm lint --strict ($name)" "$HELM" lint --strict "$CHART" "${args[@]}"
  rendered=$WORK/rendered-$name
  if "$HELM" template sandbox-extender "$CHART" --namespace sandbox-system "${args[@]}" >"$rendered" 2>"$WORK/out"; then
    ok "helm template ($name)"
  else
    bad "helm template ($name)"; continue
  fi
  rm -f "$WORK/ksc.yaml"
  check "rendered objects and configs checked with the project's schema ($name)" \
    node scripts/check-rendered-chart.mjs "$rendered" --namespace sandbox-system --ksc-out "$WORK/ksc.yaml"
  if [ -f "$WORK/ksc.yaml" ]; then
    check "kube-scheduler loads the rendered KubeSchedulerConfiguration ($name)" load_ksc "$WORK/ksc.yaml"
  fi
done
for ex in manifests/examples/kube-scheduler-*.yaml; do
  check "kube-scheduler loads $ex" load_ksc "$ex"
done

# 5. values that must fail --------------------------------------------------------------------------------------
# must_fail NAME EXPECTED-MESSAGE HELM-ARGS...
must_fail() {
  local name=$1 expected=$2; shift 2
  if "$HELM" template x "$CHART" "$@" >"$WORK/out" 2>&1; then
    echo "rendered, but should have failed" >>"$WORK/out"; bad "rejected: $name"
  elif grep -qF -- "$expected" "$WORK/out"; then ok "rejected: $name"
  else echo "(expected: $expected)" >>"$WORK/out"; bad "rejected: $name"; fi
}
must_fail "replicas 2 without leader election" "/scheduler/leaderElection/enabled': value must be true" \
  --set replicas=2 --set scheduler.leaderElection.enabled=false
must_fail "unknown strategy" "/extender/config/strategy': value must be one of" --set extender.config.strategy=fastest
must_fail "unknown extender setting" "additional properties 'bogus' not allowed" --set extender.config.bogus=1
must_fail "chart-owned server.host" "additional properties 'host' not allowed" --set extender.config.server.host=0.0.0.0
must_fail "chart-owned schedulerName" "additional properties 'schedulerName' not allowed" --set extender.config.schedulerName=x
must_fail "chart-owned requeue object" "additional properties 'namespace' not allowed" --set extender.config.requeue.namespace=x
must_fail "TTL 0" "/extender/config/placementReservationTtlSeconds': exclusiveMinimum" --set extender.config.placementReservationTtlSeconds=0
must_fail "invalid dimension" "/extender/config/dimensions/0'" --set 'extender.config.dimensions[0]=not a resource'
must_fail "repeated dimension" "must not repeat a resource" --set 'extender.config.dimensions={cpu,cpu}'
must_fail "weight 0" "/schedulerExtender/weight': minimum" --set schedulerExtender.weight=0
must_fail "percentageOfNodesToScore 101" "/scheduler/percentageOfNodesToScore': maximum" --set scheduler.percentageOfNodesToScore=101
must_fail "scheduler-mode kubeScheduler.percentageOfNodesToScore" "set that instead" --set extender.config.kubeScheduler.percentageOfNodesToScore=50
must_fail "extender-mode kubeScheduler.percentageOfNodesToScore 101" "/extender/config/kubeScheduler/percentageOfNodesToScore': maximum" \
  --set mode=extender --set extenderService.tls.secretName=t --set extender.config.kubeScheduler.percentageOfNodesToScore=101
must_fail "writable root filesystem" "/containerSecurityContext/readOnlyRootFilesystem': value must be true" \
  --set containerSecurityContext.readOnlyRootFilesystem=false
must_fail "extender mode without a certificate" "set extenderService.tls.secretName" --set mode=extender
must_fail "cert-manager without an issuer" "issuerRef.name is required" --set mode=extender --set extenderService.tls.certManager.enabled=true
must_fail "unknown mode" "/mode': value must be one of" --set mode=both
must_fail "extender-mode bind without client certificates" "needs client-certificate authentication" \
  --set mode=extender --set extenderService.tls.secretName=t --set schedulerExtender.bind=true
must_fail "host network with a port used twice" "schedulerSecurePort, extenderPort and gatewayPort must differ" \
  --set hostNetwork.enabled=true --set hostNetwork.gatewayPort=10359
must_fail "API server port out of range" "/apiServer/port': maximum" --set apiServer.host=control-plane.example --set apiServer.port=70000

# 6. plain manifests ---------------------------------------------------------------------------------------------
check "manifests/sandbox-extender.yaml = helm template of the default values" env HELM="$HELM" bash scripts/render-manifests.sh --check

echo "helm-check: $passed passed, $failed failed"
[ "$failed" = 0 ]
