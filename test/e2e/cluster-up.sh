#!/usr/bin/env bash
# Starts a local Kubernetes control plane with the sandbox-extender wired into kube-scheduler, as plain
# processes on 127.0.0.1 (no Docker, no kubelet):
#
#   etcd -> kube-apiserver (RBAC) -> kube-controller-manager
#        -> KWOK (fake nodes from a cluster description; bound pods become Running and Ready)
#        -> snapshot feeder (kubectl get nodes,pods every second) -> sandbox-extender (serve --snapshot)
#        -> kube-scheduler "sandbox-scheduler" (profile sandbox-scheduler + the extender, own lease)
#        -> kube-scheduler "default-scheduler" (profile default-scheduler only, for comparison)
#
# Every listener is on 127.0.0.1 at a free port chosen at start. State goes to $SANDBOX_E2E_STATE (default
# .e2e/ in the repository): kubeconfig, cluster.env (ports and URLs), pids/, logs/, pki/, etcd/.
# Stop it with test/e2e/cluster-down.sh, which stops exactly the processes started here, by pid.
#
# Environment:
#   CLUSTER=examples/cluster/heterogeneous.yaml   cluster description (format: examples/cluster/README.md)
#   CLUSTER_NODES=1000x32/128Gi                   shorthand instead of a file ([COUNTx]CPUS[/MEMORY],...)
#   EXTENDER_CONFIG=FILE                          passed to the extender as --config
#   EXTENDER_BUILD=0                              skip `npm run build` (dist/ is already fresh)
#   E2E_START_TIMEOUT=120                         seconds to wait for each component
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CLUSTER=${CLUSTER:-examples/cluster/heterogeneous.yaml}
CLUSTER_NODES=${CLUSTER_NODES:-}
EXTENDER_CONFIG=${EXTENDER_CONFIG:-}
EXTENDER_BUILD=${EXTENDER_BUILD:-1}
TIMEOUT=${E2E_START_TIMEOUT:-120}
SCHEDULER_NAME=sandbox-scheduler

S=$E2E_STATE PKI=$E2E_STATE/pki LOGS=$E2E_STATE/logs PIDS=$E2E_STATE/pids
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

# start NAME COMMAND...: runs COMMAND in the background, output to logs/NAME.log, pid (+ start time) to pids/NAME.
start() {
  local name=$1; shift
  "$@" </dev/null >"$LOGS/$name.log" 2>&1 &
  local pid=$!
  echo "$pid $(e2e_proc_starttime "$pid")" >"$PIDS/$name"
  e2e_log "started $name (pid $pid)"
}

# wait_for NAME WHAT COMMAND...: polls COMMAND until it succeeds; fails fast if process NAME exits or on timeout.
wait_for() {
  local name=$1 what=$2; shift 2
  local deadline=$((SECONDS + TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if ! e2e_pidfile_alive "$PIDS/$name"; then
      tail -n 40 "$LOGS/$name.log" >&2 || true
      e2e_die "$name exited before $what (log above, full log: $LOGS/$name.log)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 40 "$LOGS/$name.log" >&2 || true
      e2e_die "$name: $what not reached within ${TIMEOUT}s (log above, full log: $LOGS/$name.log)"
    fi
    sleep 0.5
  done
  e2e_log "$name: $what"
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
read -r P_ETCD P_ETCD_PEER P_API P_KCM P_SCHED P_SCHED_DEFAULT P_EXT <<<"$(e2e_free_ports 7)"
[ -n "$P_EXT" ] || e2e_die "could not pick free ports on 127.0.0.1"

# ---------------------------------------------------------------------------------------------- PKI
# One CA; a serving certificate for kube-apiserver; one client certificate per identity. The control-plane
# components use their own users so that RBAC applies to them as in a real cluster:
#   admin (O=system:masters): kubectl, the tests, the snapshot feeder, KWOK (it writes node and pod status)
#   system:kube-scheduler, system:kube-controller-manager: the built-in roles of these components
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
for id in kube-scheduler kube-controller-manager kwok; do kubeconfig "$PKI/$id.kubeconfig" "$id"; done

# ---------------------------------------------------------------------------------------------- etcd
start etcd "$BIN/etcd" --name=e2e --data-dir="$S/etcd" \
  --listen-client-urls="http://127.0.0.1:$P_ETCD" --advertise-client-urls="http://127.0.0.1:$P_ETCD" \
  --listen-peer-urls="http://127.0.0.1:$P_ETCD_PEER" --initial-advertise-peer-urls="http://127.0.0.1:$P_ETCD_PEER" \
  --initial-cluster="e2e=http://127.0.0.1:$P_ETCD_PEER" \
  --unsafe-no-fsync --auto-compaction-retention=1 --quota-backend-bytes=8589934592
wait_for etcd "healthy" curl -fsS "http://127.0.0.1:$P_ETCD/health"

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
wait_for kube-apiserver "ready" "${KUBECTL[@]}" get --raw=/readyz

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
wait_for kube-controller-manager "healthy" curl -kfsS "https://127.0.0.1:$P_KCM/healthz"
wait_for kube-controller-manager "created the default ServiceAccount" "${KUBECTL[@]}" -n default get serviceaccount default

# ---------------------------------------------------------------------------------------------- nodes + KWOK
if [ -n "$CLUSTER_NODES" ]; then node_args=(--nodes "$CLUSTER_NODES"); cluster_name="--nodes $CLUSTER_NODES"
else node_args=("$CLUSTER"); cluster_name=${CLUSTER#"$REPO_ROOT"/}; fi
node "$E2E_DIR/cluster-nodes.mjs" "${node_args[@]}" >"$S/nodes.json" || e2e_die "invalid cluster description $cluster_name"
e2e_log "cluster $cluster_name: $(node "$E2E_DIR/cluster-nodes.mjs" --summary "${node_args[@]}")"
"${KUBECTL[@]}" create -f "$S/nodes.json" >"$LOGS/create-nodes.log" 2>&1 \
  || { tail -n 20 "$LOGS/create-nodes.log" >&2; e2e_die "creating the nodes failed"; }

# KWOK has no built-in stages: node-initialize (Ready, keeps the given allocatable), lease heartbeats, and for
# pods: bound -> Running and Ready, Job pods -> Succeeded, deleting -> deleted (no kubelet would finish it).
for f in node-initialize node-heartbeat-with-lease pod-ready pod-complete pod-delete; do
  cat "$BIN/kwok-stages/$f.yaml"; echo "---"
done >"$S/kwok.yaml"
start kwok "$BIN/kwok" --kubeconfig="$PKI/kwok.kubeconfig" --config="$S/kwok.yaml" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds=40 --cidr=10.244.0.0/16
node_count=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).items.length)' "$S/nodes.json")
nodes_ready() {
  local ready
  ready=$("${KUBECTL[@]}" get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')
  [ "$ready" -eq "$node_count" ]
}
wait_for kwok "all $node_count nodes Ready" nodes_ready

# ---------------------------------------------------------------------------------------------- extender
# Until the extender watches the API server itself, it reads a snapshot file that this loop refreshes.
SNAPSHOT=$S/snapshot.json
feeder=(node "$E2E_DIR/snapshot-feeder.mjs" --kubectl "$BIN/kubectl" --kubeconfig "$E2E_KUBECONFIG" --out "$SNAPSHOT")
"${feeder[@]}" --once 2>>"$LOGS/snapshot-feeder.log" || e2e_die "the first snapshot failed (see $LOGS/snapshot-feeder.log)"
start snapshot-feeder "${feeder[@]}" --interval-ms 1000

extender=(node "$EXTENDER_MAIN" serve --snapshot "$SNAPSHOT" --host 127.0.0.1 --port "$P_EXT")
[ -z "$EXTENDER_CONFIG" ] || extender+=(--config "$EXTENDER_CONFIG")
start sandbox-extender "${extender[@]}"
wait_for sandbox-extender "ready" curl -fsS "http://127.0.0.1:$P_EXT/readyz"

# ---------------------------------------------------------------------------------------------- schedulers
"${KUBECTL[@]}" apply -f "$E2E_DIR/manifests/sandbox-scheduler-rbac.yaml" >"$LOGS/rbac.log" 2>&1 \
  || { cat "$LOGS/rbac.log" >&2; e2e_die "applying the sandbox-scheduler RBAC failed"; }

# Extenders apply to every profile of a kube-scheduler process, so the sandbox-scheduler process has only
# its own profile. Its score plugins are off: the extender's prioritize alone ranks the nodes.
cat >"$S/kube-scheduler-sandbox.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$PKI/kube-scheduler.kubeconfig", qps: 200, burst: 400}
leaderElection:
  leaderElect: true
  resourceLock: leases
  resourceNamespace: kube-system
  resourceName: $SCHEDULER_NAME
percentageOfNodesToScore: 100
profiles:
  - schedulerName: $SCHEDULER_NAME
    plugins:
      score:
        disabled: [{name: "*"}]
extenders:
  - urlPrefix: "http://127.0.0.1:$P_EXT"
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 1
    nodeCacheCapable: true
    httpTimeout: 5s
    ignorable: false
EOF
# The comparison scheduler: stock profile, default lease name (kube-scheduler).
cat >"$S/kube-scheduler-default.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$PKI/kube-scheduler.kubeconfig", qps: 200, burst: 400}
leaderElection: {leaderElect: true, resourceLock: leases, resourceNamespace: kube-system, resourceName: kube-scheduler}
percentageOfNodesToScore: 100
profiles:
  - schedulerName: default-scheduler
EOF
# start_scheduler NAME PORT CONFIG
start_scheduler() {
  start "$1" "$BIN/kube-scheduler" --config="$3" \
    --authentication-kubeconfig="$PKI/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$PKI/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$2" \
    --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics --profiling=false
}
start_scheduler kube-scheduler-sandbox "$P_SCHED" "$S/kube-scheduler-sandbox.yaml"
start_scheduler kube-scheduler-default "$P_SCHED_DEFAULT" "$S/kube-scheduler-default.yaml"
lease_held() { [ -n "$("${KUBECTL[@]}" -n kube-system get lease "$1" -o 'jsonpath={.spec.holderIdentity}')" ]; }
wait_for kube-scheduler-sandbox "healthy" curl -kfsS "https://127.0.0.1:$P_SCHED/healthz"
wait_for kube-scheduler-sandbox "leader (lease kube-system/$SCHEDULER_NAME)" lease_held "$SCHEDULER_NAME"
wait_for kube-scheduler-default "healthy" curl -kfsS "https://127.0.0.1:$P_SCHED_DEFAULT/healthz"
wait_for kube-scheduler-default "leader (lease kube-system/kube-scheduler)" lease_held kube-scheduler

# ---------------------------------------------------------------------------------------------- done
cat >"$S/cluster.env" <<EOF
# Written by test/e2e/cluster-up.sh (KEY=VALUE, sourceable).
KUBECONFIG=$E2E_KUBECONFIG
E2E_BIN=$BIN
KUBECTL=$BIN/kubectl
CLUSTER=$cluster_name
NODE_COUNT=$node_count
APISERVER_URL=https://127.0.0.1:$P_API
ETCD_URL=http://127.0.0.1:$P_ETCD
KCM_URL=https://127.0.0.1:$P_KCM
EXTENDER_URL=http://127.0.0.1:$P_EXT
SANDBOX_SCHEDULER_URL=https://127.0.0.1:$P_SCHED
DEFAULT_SCHEDULER_URL=https://127.0.0.1:$P_SCHED_DEFAULT
SNAPSHOT=$SNAPSHOT
LOGS=$LOGS
EOF
rel_state=${E2E_STATE#"$REPO_ROOT"/}
e2e_log "cluster up in $((SECONDS - t_start))s: $node_count nodes, extender at http://127.0.0.1:$P_EXT"
cat >&2 <<EOF

  export KUBECONFIG=$rel_state/kubeconfig PATH=$rel_state/bin:\$PATH
  kubectl get nodes
  # pods with spec.schedulerName: $SCHEDULER_NAME go through the extender; others use default-scheduler
  # ports, URLs: $rel_state/cluster.env   logs: $rel_state/logs/   stop: npm run cluster:down

EOF
