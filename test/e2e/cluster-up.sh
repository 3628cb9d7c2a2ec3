#!/usr/bin/env bash
# Starts a local Kubernetes control plane with the sandbox-extender wired into kube-scheduler, as plain
# processes on 127.0.0.1 (no Docker; kubelets only with REAL_NODES=N):
#
#   etcd -> kube-apiserver (RBAC) -> kube-controller-manager
#        -> KWOK (fake nodes from a cluster description; bound pods become Running and Ready)
#        -> sandbox-extender: cluster mode (list+watch through its own identity, least-privilege RBAC; binds pods,
#           records Events), or snapshot mode (a feeder runs kubectl get nodes,pods every second into a file)
#        -> kube-scheduler "sandbox-scheduler" (profile sandbox-scheduler + the extender, own lease)
#        -> kube-scheduler "default-scheduler" (profile default-scheduler only, for comparison)
#        -> agent-sandbox-controller (Sandbox, SandboxTemplate, SandboxClaim, SandboxWarmPool; AGENT_SANDBOX=0: none)
#        -> real nodes beside the KWOK nodes (REAL_NODES=N: a containerd and a kubelet each, test/e2e/kubelet.sh)
#
# Every listener is on 127.0.0.1 at a free port chosen at start. State goes to $SANDBOX_E2E_STATE (default
# .e2e/ in the repository): kubeconfig, cluster.env (ports and URLs), pids/, cmd/, logs/, pki/, etcd/.
# Stop it with test/e2e/cluster-down.sh, which stops exactly the processes started here, by pid;
# test/e2e/component.sh restarts one of them (the extender with another config, the scheduler with bind on/off).
#
# Environment:
#   CLUSTER=examples/cluster/heterogeneous.yaml   cluster description (format: examples/cluster/README.md)
#   CLUSTER_NODES=1000x32/128Gi                   shorthand instead of a file ([COUNTx]CPUS[/MEMORY],...)
#   EXTENDER_MODE=cluster                         cluster: the extender watches the API server (identity CN=sandbox-extender,
#                                                 RBAC from test/e2e/manifests/sandbox-extender-rbac.yaml);
#                                                 snapshot: it reads a file that a kubectl loop refreshes
#   EXTENDER_BIND=1                               the extender binds (bindVerb: bind); cluster mode only (default 0 in
#                                                 snapshot mode)
#   EXTENDER_CONFIG=FILE                          passed to the extender as --config
#   EXTENDER_BUILD=0                              skip `npm run build` (dist/ is already fresh)
#   KWOK_POD_READY_DELAY=0s                       how long after it is bound a pod becomes Running and Ready (KWOK
#                                                 Stage delay; e.g. 5s, 1500ms); a pod's annotation
#                                                 e2e.sandbox-extender.io/ready-delay (a Go duration) overrides it
#   SANDBOX_PERCENTAGE=100                        percentageOfNodesToScore of the sandbox-scheduler profile, 0–100 (0:
#                                                 kube-scheduler's adaptive default, 50 − nodes/125 %, at least 5 %)
#   STOCK_PERCENTAGE=                             percentageOfNodesToScore of the stock default-scheduler; empty (the
#                                                 default): not set, kube-scheduler as shipped; 0–100: a labelled extra
#   AGENT_SANDBOX=1                               apply the agent-sandbox CRDs (served at v1beta1 only, conversion None)
#                                                 and run agent-sandbox-controller (0: neither)
#   SANDBOX_SCHEDULER=1                           start the extender and the sandbox-scheduler kube-scheduler (0:
#                                                 neither, for a cluster where the Helm chart installs its own)
#   REAL_NODES=0                                  real nodes real-0 ... real-<N-1> (test/e2e/kubelet.sh; its
#                                                 REAL_NODE_* variables name the images and the registry)
#   SANDBOX_SCHEDULER_VERBOSITY=                  --v of the sandbox-scheduler kube-scheduler, 0–10 (empty: not given, its
#                                                 default 0); 2 logs each node it adds to or removes from its node tree, in
#                                                 order (sampling.e2e.test.ts reads its node order from them)
#   E2E_START_TIMEOUT=120                         seconds to wait for each component
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CLUSTER=${CLUSTER:-examples/cluster/heterogeneous.yaml}
CLUSTER_NODES=${CLUSTER_NODES:-}
EXTENDER_MODE=${EXTENDER_MODE:-cluster}
EXTENDER_CONFIG=${EXTENDER_CONFIG:-}
[ -z "${SCHEDULER_PERCENTAGE:-}" ] \
  || e2e_die "SCHEDULER_PERCENTAGE is gone: SANDBOX_PERCENTAGE sets the sandbox profile, STOCK_PERCENTAGE the stock scheduler"
SANDBOX_PERCENTAGE=${SANDBOX_PERCENTAGE:-100}
STOCK_PERCENTAGE=${STOCK_PERCENTAGE:-}
e2e_check_percentage SANDBOX_PERCENTAGE "$SANDBOX_PERCENTAGE"
[ -z "$STOCK_PERCENTAGE" ] || e2e_check_percentage STOCK_PERCENTAGE "$STOCK_PERCENTAGE"
EXTENDER_BUILD=${EXTENDER_BUILD:-1}
KWOK_POD_READY_DELAY=${KWOK_POD_READY_DELAY:-0s}
AGENT_SANDBOX=${AGENT_SANDBOX:-1}
case "$AGENT_SANDBOX" in 0|1) ;; *) e2e_die "AGENT_SANDBOX must be 0 or 1, not '$AGENT_SANDBOX'";; esac
SANDBOX_SCHEDULER=${SANDBOX_SCHEDULER:-1}
case "$SANDBOX_SCHEDULER" in 0|1) ;; *) e2e_die "SANDBOX_SCHEDULER must be 0 or 1, not '$SANDBOX_SCHEDULER'";; esac
REAL_NODES=${REAL_NODES:-0}
SANDBOX_SCHEDULER_VERBOSITY=${SANDBOX_SCHEDULER_VERBOSITY:-}
[[ -z $SANDBOX_SCHEDULER_VERBOSITY || $SANDBOX_SCHEDULER_VERBOSITY =~ ^([0-9]|10)$ ]] \
  || e2e_die "SANDBOX_SCHEDULER_VERBOSITY must be a klog level 0–10, not '$SANDBOX_SCHEDULER_VERBOSITY'"
[[ $REAL_NODES =~ ^[0-9]$ ]] || e2e_die "REAL_NODES must be a number of nodes 0-9, not '$REAL_NODES'"
case "$KWOK_POD_READY_DELAY" in
  *ms) ready_delay_ms=${KWOK_POD_READY_DELAY%ms};;
  *s) ready_delay_ms=${KWOK_POD_READY_DELAY%s}
      [[ $ready_delay_ms =~ ^[0-9]{1,9}$ ]] && ready_delay_ms=$((10#$ready_delay_ms * 1000));;
  *) ready_delay_ms=x;;
esac
[[ $ready_delay_ms =~ ^[0-9]{1,12}$ ]] \
  || e2e_die "KWOK_POD_READY_DELAY must be whole seconds or milliseconds (5s, 1500ms), not '$KWOK_POD_READY_DELAY'"
ready_delay_ms=$((10#$ready_delay_ms))
SCHEDULER_NAME=sandbox-scheduler
case "$EXTENDER_MODE" in
  cluster) EXTENDER_BIND=${EXTENDER_BIND:-1};;
  snapshot) EXTENDER_BIND=${EXTENDER_BIND:-0}
            [ "$EXTENDER_BIND" = 0 ] || e2e_die "EXTENDER_BIND=1 needs EXTENDER_MODE=cluster (a snapshot-mode extender cannot bind)";;
  *) e2e_die "EXTENDER_MODE must be cluster or snapshot, not '$EXTENDER_MODE'";;
esac
case "$EXTENDER_BIND" in 0|1) ;; *) e2e_die "EXTENDER_BIND must be 0 or 1, not '$EXTENDER_BIND'";; esac
if [ -n "$EXTENDER_CONFIG" ]; then
  case "$EXTENDER_CONFIG" in /*) ;; *) EXTENDER_CONFIG=$PWD/$EXTENDER_CONFIG;; esac
  [ -f "$EXTENDER_CONFIG" ] || e2e_die "EXTENDER_CONFIG $EXTENDER_CONFIG not found"
fi

S=$E2E_STATE PKI=$E2E_STATE/pki LOGS=$E2E_LOGS PIDS=$E2E_PIDS
t_start=$SECONDS

# ---------------------------------------------------------------------------------------------- preflight
for c in openssl node curl sha256sum flock; do
  command -v "$c" >/dev/null || e2e_die "$c is not installed"
done
if [ -d "$PIDS" ]; then
  for f in "$PIDS"/*; do
    [ -e "$f" ] || continue
    e2e_pidfile_alive "$f" && e2e_die "a cluster is already running from $E2E_STATE ($(basename "$f") is up); stop it with test/e2e/cluster-down.sh"
  done
fi
if [ -z "$CLUSTER_NODES" ]; then
  case "$CLUSTER" in /*) ;; *) CLUSTER=$REPO_ROOT/$CLUSTER;; esac
  [ -f "$CLUSTER" ] || e2e_die "cluster description $CLUSTER not found"
fi

# Real nodes of a run that was killed leave mounts and containers behind: remove them before the folder.
[ ! -d "$E2E_STATE/nodes" ] || "$E2E_DIR/kubelet.sh" down
rm -rf "$E2E_STATE"
mkdir -p "$PKI" "$LOGS" "$PIDS" "$S/etcd"
chmod 700 "$PKI" "$S/etcd"

# On any failure: say what failed (the message comes from e2e_die) and stop whatever was started.
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    e2e_log "cluster-up failed (exit $rc); stopping the processes it started. Logs: $LOGS"
    "$E2E_DIR/cluster-down.sh" --keep-logs >&2 || true
  fi
}
trap on_exit EXIT

# start NAME COMMAND...: start the component and record its command (for component.sh restart).
start() { e2e_save_cmd "$@"; e2e_start "$@"; }
# run_logged LOG MESSAGE COMMAND...: runs COMMAND with its output appended to $LOGS/LOG.log; if it fails, shows the
# end of that log and dies with MESSAGE.
run_logged() {
  local log=$LOGS/$1.log message=$2; shift 2
  "$@" >>"$log" 2>&1 || { tail -n 40 "$log" >&2; e2e_die "$message"; }
}

# ---------------------------------------------------------------------------------------------- binaries
"$E2E_DIR/build-tools.sh" || e2e_die "building the control-plane tools failed (see above)"
BIN=$E2E_BIN
ln -s "$BIN" "$S/bin"                          # export PATH="$PWD/.e2e/bin:$PATH" for kubectl, helm, ...
KUBECTL=("$BIN/kubectl" "--kubeconfig=$E2E_KUBECONFIG")

if [ "$EXTENDER_BUILD" != 0 ]; then
  e2e_log "building the extender (npm run build)"
  (cd "$REPO_ROOT" && npm run build --silent) >"$LOGS/npm-build.log" 2>&1 \
    || { tail -n 40 "$LOGS/npm-build.log" >&2; e2e_die "npm run build failed (log above)"; }
fi
EXTENDER_MAIN=$REPO_ROOT/dist/src/cli/main.js
[ -f "$EXTENDER_MAIN" ] || e2e_die "$EXTENDER_MAIN not found: run npm run build"

# ---------------------------------------------------------------------------------------------- ports
read -r P_ETCD P_ETCD_PEER P_API P_KCM P_SCHED P_SCHED_DEFAULT P_EXT P_AS_METRICS P_AS_HEALTH <<<"$(e2e_free_ports 9)"
[ -n "$P_AS_HEALTH" ] || e2e_die "could not pick free ports on 127.0.0.1"

# ---------------------------------------------------------------------------------------------- PKI
# One CA; a serving certificate for kube-apiserver; one client certificate per identity. The control-plane
# components use their own users so that RBAC applies to them as in a real cluster:
#   admin (O=system:masters): kubectl, the tests, the snapshot feeder, KWOK (it writes node and pod status)
#   system:kube-scheduler, system:kube-controller-manager: the built-in roles of these components
#   sandbox-extender: only what manifests/sandbox-extender-rbac.yaml grants (watch nodes and pods, bind, events)
e2e_log "creating certificates in $PKI"
openssl_quiet() { openssl "$@" 2>>"$LOGS/openssl.log" || e2e_die "openssl $1 failed (see $LOGS/openssl.log)"; }
openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 -subj "/CN=sandbox-e2e-ca" \
  -keyout "$PKI/ca.key" -out "$PKI/ca.crt" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
# cert NAME SUBJECT EXTENDED-KEY-USAGE [SUBJECT-ALT-NAMES]
cert() {
  local name=$1 subj=$2 eku=$3 san=${4:-}
  openssl_quiet req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$subj" \
    -keyout "$PKI/$name.key" -out "$PKI/$name.csr"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } >"$PKI/$name.ext"
  openssl_quiet x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt"
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}
cert kube-apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert admin "/O=system:masters/CN=sandbox-e2e-admin" clientAuth
cert kube-scheduler "/CN=system:kube-scheduler" clientAuth
cert kube-controller-manager "/CN=system:kube-controller-manager" clientAuth
cert kwok "/O=system:masters/CN=kwok-controller" clientAuth
cert sandbox-extender "/CN=sandbox-extender" clientAuth
cert front-proxy-client "/CN=front-proxy-client" clientAuth   # aggregation layer (quiets "missing requestheader CA")
openssl_quiet genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key"   # service-account tokens
openssl_quiet pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"

# kubeconfig FILE CERT-NAME
kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: sandbox-e2e
    cluster: {server: "https://127.0.0.1:$P_API", certificate-authority: "$PKI/ca.crt"}
users:
  - name: $2
    user: {client-certificate: "$PKI/$2.crt", client-key: "$PKI/$2.key"}
contexts:
  - name: sandbox-e2e
    context: {cluster: sandbox-e2e, user: $2}
current-context: sandbox-e2e
EOF
}
kubeconfig "$E2E_KUBECONFIG" admin
for id in kube-scheduler kube-controller-manager kwok sandbox-extender; do kubeconfig "$PKI/$id.kubeconfig" "$id"; done

# ---------------------------------------------------------------------------------------------- etcd
start etcd "$BIN/etcd" --name=e2e --data-dir="$S/etcd" \
  --listen-client-urls="http://127.0.0.1:$P_ETCD" --advertise-client-urls="http://127.0.0.1:$P_ETCD" \
  --listen-peer-urls="http://127.0.0.1:$P_ETCD_PEER" --initial-advertise-peer-urls="http://127.0.0.1:$P_ETCD_PEER" \
  --initial-cluster="e2e=http://127.0.0.1:$P_ETCD_PEER" \
  --unsafe-no-fsync --auto-compaction-retention=1 --quota-backend-bytes=8589934592
e2e_wait_for etcd "healthy" curl -fsS "http://127.0.0.1:$P_ETCD/health"

# ---------------------------------------------------------------------------------------------- kube-apiserver
# --endpoint-reconciler-type=none: the "kubernetes" Service would otherwise get an endpoint at the loopback
# advertise address, which the API rejects (log noise); nothing here uses that Service.
start kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$P_ETCD" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$P_API" \
  --tls-cert-file="$PKI/kube-apiserver.crt" --tls-private-key-file="$PKI/kube-apiserver.key" \
  --client-ca-file="$PKI/ca.crt" \
  --requestheader-client-ca-file="$PKI/ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
  --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
  --allow-privileged=true --profiling=false
e2e_wait_for kube-apiserver "ready" "${KUBECTL[@]}" get --raw=/readyz

# ---------------------------------------------------------------------------------------------- kube-controller-manager
# Needed for the default ServiceAccount of each namespace (ServiceAccount admission), Deployments/ReplicaSets/
# Jobs, namespace deletion and garbage collection. Controllers run with their own service-account credentials.
start kube-controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig="$PKI/kube-controller-manager.kubeconfig" \
  --authentication-kubeconfig="$PKI/kube-controller-manager.kubeconfig" \
  --authorization-kubeconfig="$PKI/kube-controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$P_KCM" \
  --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
  --client-ca-file="$PKI/ca.crt" --root-ca-file="$PKI/ca.crt" \
  --service-account-private-key-file="$PKI/sa.key" --use-service-account-credentials=true \
  --leader-elect=false --profiling=false
e2e_wait_for kube-controller-manager "healthy" curl -kfsS "https://127.0.0.1:$P_KCM/healthz"
e2e_wait_for kube-controller-manager "created the default ServiceAccount" "${KUBECTL[@]}" -n default get serviceaccount default

# ---------------------------------------------------------------------------------------------- nodes + KWOK
if [ -n "$CLUSTER_NODES" ]; then node_args=(--nodes "$CLUSTER_NODES"); cluster_name="--nodes $CLUSTER_NODES"
else node_args=("$CLUSTER"); cluster_name=${CLUSTER#"$REPO_ROOT"/}; fi
node "$E2E_DIR/cluster-nodes.mjs" "${node_args[@]}" >"$S/nodes.json" || e2e_die "invalid cluster description $cluster_name"
e2e_log "cluster $cluster_name: $(node "$E2E_DIR/cluster-nodes.mjs" --summary "${node_args[@]}")"
run_logged create-nodes "creating the nodes failed" "${KUBECTL[@]}" create -f "$S/nodes.json"

# KWOK has no built-in stages: node-initialize (Ready, keeps the given allocatable), lease heartbeats, and for
# pods: bound -> Running and Ready, Job pods -> Succeeded, deleting -> deleted (no kubelet would finish it).
# pod-ready gets a Stage delay (KWOK v0.8.0 StageDelay): KWOK_POD_READY_DELAY after KWOK sees the pod bound, or
# the pod's own e2e.sandbox-extender.io/ready-delay annotation (durationFrom; a Go duration such as 3s).
for f in node-initialize node-heartbeat-with-lease pod-ready pod-complete pod-delete; do
  if [ "$f" = pod-ready ]; then
    awk -v ms="$ready_delay_ms" '
      { print }
      /^spec:$/ && !done {
        print "  delay:"
        print "    durationMilliseconds: " ms
        print "    durationFrom:"
        print "      expressionFrom: '\''.metadata.annotations[\"e2e.sandbox-extender.io/ready-delay\"]'\''"
        done = 1
      }' "$BIN/kwok-stages/$f.yaml"
  else
    cat "$BIN/kwok-stages/$f.yaml"
  fi
  echo "---"
done >"$S/kwok.yaml"
grep -q '^    durationMilliseconds: ' "$S/kwok.yaml" || e2e_die "could not add the Ready delay to the pod-ready stage ($BIN/kwok-stages/pod-ready.yaml has no 'spec:' line)"
start kwok "$BIN/kwok" --kubeconfig="$PKI/kwok.kubeconfig" --config="$S/kwok.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds=40 --cidr=10.244.0.0/16
node_count=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).items.length)' "$S/nodes.json")
nodes_ready() {
  local ready
  ready=$("${KUBECTL[@]}" get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')
  [ "$ready" -eq "$node_count" ]
}
e2e_wait_for kwok "all $node_count nodes Ready" nodes_ready

# ---------------------------------------------------------------------------------------------- extender
SNAPSHOT=
if [ "$SANDBOX_SCHEDULER" = 0 ]; then
  e2e_log "SANDBOX_SCHEDULER=0: no extender and no sandbox-scheduler"
elif [ "$EXTENDER_MODE" = snapshot ]; then
  # Snapshot mode: the extender reads a file that this loop refreshes (no API access, no bind, no Events).
  SNAPSHOT=$S/snapshot.json
  feeder=(node "$E2E_DIR/snapshot-feeder.mjs" --kubectl "$BIN/kubectl" --kubeconfig "$E2E_KUBECONFIG" --out "$SNAPSHOT")
  "${feeder[@]}" --once 2>>"$LOGS/snapshot-feeder.log" || e2e_die "the first snapshot failed (see $LOGS/snapshot-feeder.log)"
  start snapshot-feeder "${feeder[@]}" --interval-ms 1000
  extender=(node "$EXTENDER_MAIN" serve --snapshot "$SNAPSHOT" --host 127.0.0.1 --port "$P_EXT")
else
  # Cluster mode: the extender list+watches Nodes and Pods, binds and records Events as user sandbox-extender,
  # with only the permissions of its ClusterRole, applied before it starts so RBAC is really exercised.
  run_logged rbac-extender "applying the sandbox-extender RBAC failed" \
    "${KUBECTL[@]}" apply -f "$E2E_DIR/manifests/sandbox-extender-rbac.yaml"
  extender=(node "$EXTENDER_MAIN" serve --kubeconfig "$PKI/sandbox-extender.kubeconfig" --host 127.0.0.1 --port "$P_EXT")
fi
if [ "$SANDBOX_SCHEDULER" = 1 ]; then
  [ -z "$EXTENDER_CONFIG" ] || extender+=(--config "$EXTENDER_CONFIG")
  start sandbox-extender "${extender[@]}"
  e2e_wait_for sandbox-extender "ready ($EXTENDER_MODE mode)" curl -fsS "http://127.0.0.1:$P_EXT/readyz"
  e2e_die_if_forbidden "$LOGS/sandbox-extender.log" "the extender"
fi

# ---------------------------------------------------------------------------------------------- schedulers
run_logged rbac "applying the sandbox-scheduler RBAC failed" \
  "${KUBECTL[@]}" apply -f "$E2E_DIR/manifests/sandbox-scheduler-rbac.yaml"

SANDBOX_SCHEDULER_CONFIG=$S/kube-scheduler-sandbox.yaml
e2e_sandbox_scheduler_config "$PKI/kube-scheduler.kubeconfig" "http://127.0.0.1:$P_EXT" "$SCHEDULER_NAME" "$EXTENDER_BIND" "$SANDBOX_PERCENTAGE" \
  >"$SANDBOX_SCHEDULER_CONFIG"
# The comparison scheduler: stock profile, default lease name (kube-scheduler), percentageOfNodesToScore as
# shipped (not set) unless STOCK_PERCENTAGE asks for a labelled extra.
{
  cat <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$PKI/kube-scheduler.kubeconfig", qps: 200, burst: 400}
leaderElection: {leaderElect: true, resourceLock: leases, resourceNamespace: kube-system, resourceName: kube-scheduler}
EOF
  [ -z "$STOCK_PERCENTAGE" ] || echo "percentageOfNodesToScore: $STOCK_PERCENTAGE"
  cat <<EOF
profiles:
  - schedulerName: default-scheduler
EOF
} >"$S/kube-scheduler-default.yaml"
# start_scheduler NAME PORT CONFIG [FLAG...]
start_scheduler() {
  start "$1" "$BIN/kube-scheduler" --config="$3" "${@:4}" \
    --authentication-kubeconfig="$PKI/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$PKI/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$2" \
    --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics --profiling=false
}
[ "$SANDBOX_SCHEDULER" = 0 ] || start_scheduler kube-scheduler-sandbox "$P_SCHED" "$SANDBOX_SCHEDULER_CONFIG" \
  ${SANDBOX_SCHEDULER_VERBOSITY:+"--v=$SANDBOX_SCHEDULER_VERBOSITY"}
start_scheduler kube-scheduler-default "$P_SCHED_DEFAULT" "$S/kube-scheduler-default.yaml"
lease_held() { [ -n "$("${KUBECTL[@]}" -n kube-system get lease "$1" -o 'jsonpath={.spec.holderIdentity}')" ]; }
if [ "$SANDBOX_SCHEDULER" = 1 ]; then
  e2e_wait_for kube-scheduler-sandbox "healthy" curl -kfsS "https://127.0.0.1:$P_SCHED/healthz"
  e2e_wait_for kube-scheduler-sandbox "leader (lease kube-system/$SCHEDULER_NAME)" lease_held "$SCHEDULER_NAME"
fi
e2e_wait_for kube-scheduler-default "healthy" curl -kfsS "https://127.0.0.1:$P_SCHED_DEFAULT/healthz"
e2e_wait_for kube-scheduler-default "leader (lease kube-system/kube-scheduler)" lease_held kube-scheduler

# ---------------------------------------------------------------------------------------------- agent-sandbox
# sigs.k8s.io/agent-sandbox's controller, out of cluster with the admin kubeconfig (it is not the component under
# test; its own RBAC is the module's business). Its CRDs are served at v1beta1 only with conversion None
# (agent-sandbox-crds.mjs says why), applied server-side (the CRDs are too large for the last-applied annotation).
# Flags (v1.0.1 has no webhook server and no webhook flags: v0.5.6's --enable-webhook and --manage-webhook-certs are
# gone, and an unknown flag stops it):
#   --extensions                  also run the SandboxTemplate, SandboxClaim and SandboxWarmPool controllers
#   --leader-elect=false          one process; a restart need not wait for a lease
#   --cache-label-selectors       its Pod and Service informers see only the objects it labelled (it creates and
#                                 looks up no others), not the thousands of pods the other tests create
#   --metrics-bind-address, --health-probe-bind-address  127.0.0.1 on free ports (defaults: :8080, :8081 on all
#                                 interfaces)
AS_METRICS_URL= AS_HEALTH_URL=
if [ "$AGENT_SANDBOX" = 1 ]; then
  node "$E2E_DIR/agent-sandbox-crds.mjs" "$E2E_AGENT_SANDBOX_DIR"/crds/*.yaml >"$S/agent-sandbox-crds.json" \
    || e2e_die "could not read the agent-sandbox CRDs in $E2E_AGENT_SANDBOX_DIR/crds"
  run_logged agent-sandbox-crds "applying the agent-sandbox CRDs failed" \
    "${KUBECTL[@]}" apply --server-side -f "$S/agent-sandbox-crds.json"
  run_logged agent-sandbox-crds "the agent-sandbox CRDs were not Established within 60 s" \
    "${KUBECTL[@]}" wait --for=condition=Established --timeout=60s -f "$S/agent-sandbox-crds.json"
  AS_METRICS_URL=http://127.0.0.1:$P_AS_METRICS AS_HEALTH_URL=http://127.0.0.1:$P_AS_HEALTH
  start agent-sandbox-controller "$E2E_AGENT_SANDBOX_BIN" --kubeconfig="$E2E_KUBECONFIG" \
    --extensions --leader-elect=false --cache-label-selectors \
    --metrics-bind-address="127.0.0.1:$P_AS_METRICS" --health-probe-bind-address="127.0.0.1:$P_AS_HEALTH"
  e2e_wait_for agent-sandbox-controller "ready (controllers ${E2E_AGENT_SANDBOX_CONTROLLERS[*]} started)" e2e_agent_sandbox_started "$AS_HEALTH_URL"
fi

# ---------------------------------------------------------------------------------------------- real nodes
# With real nodes, a MutatingAdmissionPolicy stands in for a pod network: pods created without hostNetwork get it,
# and the API server's loopback address as their in-cluster address (manifests/pod-network-stand-in.yaml says why).
real_nodes=()
for ((i = 0; i < REAL_NODES; i++)); do real_nodes+=("real-$i"); done
if [ "$REAL_NODES" != 0 ]; then
  run_logged pod-network-stand-in "applying the pod network stand-in failed" "${KUBECTL[@]}" -n kube-system \
    create configmap pod-network-stand-in --from-literal=host=127.0.0.1 --from-literal=port="$P_API"
  run_logged pod-network-stand-in "applying the pod network stand-in failed" \
    "${KUBECTL[@]}" apply -f "$E2E_DIR/manifests/pod-network-stand-in.yaml"
  "$E2E_DIR/kubelet.sh" up "${real_nodes[@]}"
fi

# ---------------------------------------------------------------------------------------------- done
[ "$SANDBOX_SCHEDULER" = 1 ] || P_EXT= P_SCHED=
cat >"$S/cluster.env" <<EOF
# Written by test/e2e/cluster-up.sh: KEY=VALUE lines, values unquoted (test/e2e/component.sh keeps EXTENDER_BIND current).
KUBECONFIG=$E2E_KUBECONFIG
E2E_BIN=$BIN
KUBECTL=$BIN/kubectl
CLUSTER=$cluster_name
NODE_COUNT=$node_count
APISERVER_URL=https://127.0.0.1:$P_API
ETCD_URL=http://127.0.0.1:$P_ETCD
KCM_URL=https://127.0.0.1:$P_KCM
EXTENDER_URL=${P_EXT:+http://127.0.0.1:$P_EXT}
EXTENDER_MODE=$EXTENDER_MODE
EXTENDER_BIND=$EXTENDER_BIND
SANDBOX_PERCENTAGE=$SANDBOX_PERCENTAGE
STOCK_PERCENTAGE=$STOCK_PERCENTAGE
EXTENDER_USER=sandbox-extender
EXTENDER_CONFIG=$EXTENDER_CONFIG
KWOK_POD_READY_DELAY_MS=$ready_delay_ms
SANDBOX_SCHEDULER_NAME=$SCHEDULER_NAME
SANDBOX_SCHEDULER_URL=${P_SCHED:+https://127.0.0.1:$P_SCHED}
SANDBOX_SCHEDULER_CONFIG=$SANDBOX_SCHEDULER_CONFIG
DEFAULT_SCHEDULER_URL=https://127.0.0.1:$P_SCHED_DEFAULT
SNAPSHOT=$SNAPSHOT
AGENT_SANDBOX=$AGENT_SANDBOX
AGENT_SANDBOX_VERSION=$AGENT_SANDBOX_VERSION
AGENT_SANDBOX_METRICS_URL=$AS_METRICS_URL
AGENT_SANDBOX_HEALTH_URL=$AS_HEALTH_URL
REAL_NODES=${real_nodes[*]}
LOGS=$LOGS
EOF
rel_state=${E2E_STATE#"$REPO_ROOT"/}
if [ "$SANDBOX_SCHEDULER" = 1 ]; then
  what="extender ($EXTENDER_MODE mode, bind $([ "$EXTENDER_BIND" = 1 ] && echo on || echo off)) at http://127.0.0.1:$P_EXT"
else
  what="no extender, no sandbox-scheduler"
fi
e2e_log "cluster up in $((SECONDS - t_start))s: $node_count KWOK nodes${real_nodes[*]:+, real nodes ${real_nodes[*]}}, $what"
cat >&2 <<EOF

  export KUBECONFIG=$rel_state/kubeconfig PATH=$rel_state/bin:\$PATH
  kubectl get nodes
  # pods with spec.schedulerName: $SCHEDULER_NAME go through the extender; others use default-scheduler
  # ports, URLs: $rel_state/cluster.env   logs: $rel_state/logs/   stop: npm run cluster:down

EOF
