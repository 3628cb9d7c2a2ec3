#!/usr/bin/env bash
# Real nodes beside the KWOK nodes: for each NAME a containerd of its own and a kubelet of the control plane's
# version (built by build-tools.sh --kubelet), joined to the running e2e cluster (cluster-up.sh; REAL_NODES=N there
# calls this script) and Ready. Loopback only: pods run with hostNetwork (a pod network needs an interface with an
# address in a private range, which the e2e tier never uses), so each pod's ports must be distinct on the machine.
#
#   test/e2e/kubelet.sh up NAME...      start the nodes and wait until they are Ready
#   test/e2e/kubelet.sh down [NAME...]  stop them (default: every node of the cluster's state folder): kubelet, the
#                                       pods' containers, containerd; then unmount and remove what they left
#
# Per node, in $SANDBOX_E2E_STATE/nodes/NAME/ (pid files pids/kubelet-NAME, pids/containerd-NAME; logs as ever):
#   containerd   its own root, state and socket, so each node has its own image cache. A complete config, not an
#                `imports` of the distribution's: restrict_oom_score_adj = true under the CRI plugin (kubelet asks
#                oom_score_adj -998 for every pod sandbox, which a process without CAP_SYS_RESOURCE may not set:
#                runc then fails with "can't get final child's PID from pipe: EOF"), the sandbox (pause) image,
#                a loopback-only CNI conflist (the `loopback` plugin: the node turns Ready, no pod network) and
#                plain HTTP for the loopback registry.
#   kubelet      client certificate CN=system:node:NAME, O=system:nodes from the cluster's CA; cgroupfs driver on
#                cgroup v1 with a cgroupRoot of its own, made in every hierarchy first; serving on 127.0.0.1 at free
#                ports, anonymous + AlwaysAllow (the API server has no kubelet client certificate);
#                --cloud-provider=external, with this script in the cloud controller's part: a kubelet refuses a
#                loopback --node-ip, and without one it would report the address of the default route's interface
#                on every status update; with an external provider it leaves the addresses to the provider, so the
#                script sets InternalIP 127.0.0.1 once (the API server then reaches it for logs and exec) and
#                removes the node.cloudprovider.kubernetes.io/uninitialized taint.
#
# Environment (up):
#   REAL_NODE_PAUSE_IMAGE     the pod sandbox image's name (required); one of the archives below must hold it
#   REAL_NODE_IMAGE_ARCHIVES  image archives (docker save or OCI tarballs; space-separated) imported into each
#                             node's containerd before its kubelet starts, so that pods naming these images start
#                             without a pull (imagePullPolicy IfNotPresent) and kubelet never collects them
#   REAL_NODE_REGISTRY        HOST:PORT of a plain-HTTP registry on loopback that the nodes may pull from
#   REAL_NODE_LABELS          --node-labels (default type=real; the KWOK nodes carry type=kwok)
# The kubelet sets the kernel tunables every kubelet sets on its node (vm.overcommit_memory=1, kernel.panic=10,
# kernel.panic_on_oops=1): the machine is a node while it runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

NODES_DIR=$E2E_STATE/nodes
PKI=$E2E_STATE/pki
KUBECTL=("$E2E_BIN/kubectl" "--kubeconfig=$E2E_KUBECONFIG")
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}

usage() { e2e_die "usage: kubelet.sh up NAME... | kubelet.sh down [NAME...]"; }

# The cgroup v1 hierarchies mounted on this machine (cpu, memory, cpuset, name=systemd ...), as folders; with
# cgroup_dirs also a cgroup2 one mounted beside them (hybrid), where runc makes the pods' cgroups too.
# (mountinfo: the file system type is the field after the "-" that ends the optional fields.)
mounts_of_type() { awk -v want=" $* " '{ for (i = 7; i < NF; i++) if ($i == "-") { if (index(want, " " $(i + 1) " ")) print $5; break } }' /proc/self/mountinfo; }
cgroup_v1_dirs() { mounts_of_type cgroup; }
cgroup_dirs() { mounts_of_type cgroup cgroup2; }
cgroup_root() { echo "/sandbox-e2e-$1"; }

ctr_of() { ctr --address "$NODES_DIR/$1/containerd.sock" --namespace k8s.io "${@:2}"; }

# ------------------------------------------------------------------------------------------------- up
prepare_node() {
  local name=$1 d=$NODES_DIR/$1 p_kubelet p_healthz h
  read -r p_kubelet p_healthz <<<"$(e2e_free_ports 2)"
  [ -n "$p_healthz" ] || e2e_die "could not pick free ports on 127.0.0.1"
  mkdir -p "$d"/{containerd-root,containerd-state,cni,certs.d,kubelet,pki}
  chmod 700 "$d/pki"

  # cgroupRoot in every v1 hierarchy; cpuset needs its cpus and mems before a task may join.
  for h in $(cgroup_v1_dirs); do
    mkdir -p "$h$(cgroup_root "$name")"
    if [ -f "$h/cpuset.cpus" ]; then
      cat "$h/cpuset.cpus" >"$h$(cgroup_root "$name")/cpuset.cpus"
      cat "$h/cpuset.mems" >"$h$(cgroup_root "$name")/cpuset.mems"
    fi
  done

  # Node credentials: the identity the Node authorizer knows.
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/O=system:nodes/CN=system:node:$name" \
    -keyout "$d/pki/kubelet.key" -out "$d/pki/kubelet.csr" 2>>"$E2E_LOGS/openssl.log"
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' \
    >"$d/pki/kubelet.ext"
  openssl x509 -req -in "$d/pki/kubelet.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial -days 30 \
    -extfile "$d/pki/kubelet.ext" -out "$d/pki/kubelet.crt" 2>>"$E2E_LOGS/openssl.log" \
    || e2e_die "could not sign the client certificate of node $name (see $E2E_LOGS/openssl.log)"
  rm -f "$d/pki/kubelet.csr" "$d/pki/kubelet.ext"
  local server
  server=$(sed -n 's/^APISERVER_URL=//p' "$E2E_STATE/cluster.env" 2>/dev/null || true)
  [ -n "$server" ] || server=$("${KUBECTL[@]}" config view --minify -o 'jsonpath={.clusters[0].cluster.server}')
  cat >"$d/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: sandbox-e2e, cluster: {server: "$server", certificate-authority: "$PKI/ca.crt"}}]
users: [{name: "system:node:$name", user: {client-certificate: "$d/pki/kubelet.crt", client-key: "$d/pki/kubelet.key"}}]
contexts: [{name: sandbox-e2e, context: {cluster: sandbox-e2e, user: "system:node:$name"}}]
current-context: sandbox-e2e
EOF

  cat >"$d/cni/10-loopback.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "loopback-only", "plugins": [{"type": "loopback"}]}
EOF

  if [ -n "${REAL_NODE_REGISTRY:-}" ]; then
    mkdir -p "$d/certs.d/$REAL_NODE_REGISTRY"
    cat >"$d/certs.d/$REAL_NODE_REGISTRY/hosts.toml" <<EOF
server = "http://$REAL_NODE_REGISTRY"
[host."http://$REAL_NODE_REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
  fi

  cat >"$d/containerd.toml" <<EOF
# containerd of node $name (test/e2e/kubelet.sh): complete, no imports.
version = 2
root = "$d/containerd-root"
state = "$d/containerd-state"
[grpc]
  address = "$d/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$REAL_NODE_PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$d/cni"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$d/certs.d"
EOF

  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $p_kubelet
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $p_healthz
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$d/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: $(cgroup_root "$name")
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
serializeImagePulls: false
podLogsDir: $d/pod-logs
# A shared disk: evict only when it is really full, and never collect the images copied in (they cannot be pulled).
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
}

start_node() {
  local name=$1 d=$NODES_DIR/$1
  e2e_start "containerd-$name" containerd --config "$d/containerd.toml"
  e2e_wait_for "containerd-$name" "serving" ctr_of "$name" version
  local archive
  for archive in ${REAL_NODE_IMAGE_ARCHIVES:-}; do
    ctr_of "$name" images import "$archive" >>"$E2E_LOGS/containerd-$name.log" 2>&1 \
      || e2e_die "importing $archive into node $name failed (see $E2E_LOGS/containerd-$name.log)"
  done
  local images   # captured first: `ctr ... | grep -q` would fail under pipefail when grep stops reading early
  images=$(ctr_of "$name" images list -q)
  grep -qxF "$REAL_NODE_PAUSE_IMAGE" <<<"$images" \
    || e2e_die "node $name: the pause image $REAL_NODE_PAUSE_IMAGE is in none of REAL_NODE_IMAGE_ARCHIVES (${REAL_NODE_IMAGE_ARCHIVES:-none})"
  e2e_start "kubelet-$name" "$E2E_KUBELET_BIN" --config="$d/kubelet.yaml" --kubeconfig="$d/kubeconfig" \
    --root-dir="$d/kubelet" --cert-dir="$d/pki" --hostname-override="$name" --cloud-provider=external \
    --node-labels="${REAL_NODE_LABELS:-type=real}" --v=1
}

# The cloud controller's part (see the header): the address, then the taint that waits for it.
initialize_node() {
  local name=$1
  e2e_wait_for "kubelet-$name" "registered" "${KUBECTL[@]}" get node "$name"
  "${KUBECTL[@]}" patch node "$name" --subresource=status --type=merge \
    -p '{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}]}}' >/dev/null
  "${KUBECTL[@]}" taint node "$name" node.cloudprovider.kubernetes.io/uninitialized- >/dev/null 2>&1 || true
  node_ready() { [ "$("${KUBECTL[@]}" get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
  e2e_wait_for "kubelet-$name" "Ready" node_ready "$name"
}

up() {
  [ $# -gt 0 ] || usage
  [ -n "${REAL_NODE_PAUSE_IMAGE:-}" ] || e2e_die "REAL_NODE_PAUSE_IMAGE (the pod sandbox image) is not set"
  local archive
  for archive in ${REAL_NODE_IMAGE_ARCHIVES:-}; do [ -s "$archive" ] || e2e_die "image archive $archive not found"; done
  local c name
  for c in containerd ctr runc openssl; do command -v "$c" >/dev/null || e2e_die "$c is not installed (Debian: containerd, runc)"; done
  [ -x "$CNI_BIN_DIR/loopback" ] || e2e_die "$CNI_BIN_DIR/loopback not found (Debian: containernetworking-plugins)"
  [ -f "$E2E_KUBECONFIG" ] || e2e_die "no cluster in $E2E_STATE (start it with test/e2e/cluster-up.sh)"
  [ "$(cgroup_v1_dirs | wc -l)" -gt 0 ] || e2e_die "no cgroup v1 hierarchy mounted: this script configures the kubelet for cgroup v1"
  "$E2E_DIR/build-tools.sh" --kubelet >/dev/null || e2e_die "building the kubelet failed (see above)"
  for name in "$@"; do
    [[ $name =~ ^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$ ]] || e2e_die "node name '$name' is not a short DNS label"
    [ -z "$(e2e_pid "kubelet-$name")$(e2e_pid "containerd-$name")" ] || e2e_die "node $name is already running"
  done
  local t0=$SECONDS
  mkdir -p "$NODES_DIR"
  for name in "$@"; do prepare_node "$name"; start_node "$name"; done
  for name in "$@"; do initialize_node "$name"; done
  e2e_log "real nodes Ready in $((SECONDS - t0))s: $*"
}

# ------------------------------------------------------------------------------------------------- down
# Everything under a folder that is a mount point (kubelet's volumes, the sandboxes' /dev/shm, container root
# filesystems), deepest first.
unmount_under() {
  local m
  findmnt -rn -o TARGET | awk -v d="$1/" 'index($0, d) == 1' | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}

down_node() {
  local name=$1 d=$NODES_DIR/$1 h id
  e2e_stop "kubelet-$name" || e2e_die "could not stop kubelet-$name"
  # The pods' containers outlive kubelet and containerd (a shim per pod): remove them through this node's
  # containerd, started again for that if it is gone (a killed run).
  if [ -f "$d/containerd.toml" ]; then
    if [ -z "$(e2e_pid "containerd-$name")" ]; then
      e2e_start "containerd-$name" containerd --config "$d/containerd.toml"
      e2e_wait_for "containerd-$name" "serving (to remove the pods' containers)" ctr_of "$name" version
    fi
    for id in $(ctr_of "$name" tasks list -q 2>/dev/null); do ctr_of "$name" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; done
    # The CRI plugin deletes a task once it has seen it exit; delete what it has not yet (up to 10 s).
    for _ in $(seq 1 50); do
      [ -n "$(ctr_of "$name" tasks list -q 2>/dev/null)" ] || break
      for id in $(ctr_of "$name" tasks list -q 2>/dev/null); do ctr_of "$name" tasks delete "$id" >/dev/null 2>&1 || true; done
      sleep 0.2
    done
    for id in $(ctr_of "$name" containers list -q 2>/dev/null); do ctr_of "$name" containers delete "$id" >/dev/null 2>&1 || true; done
  fi
  e2e_stop "containerd-$name" || e2e_die "could not stop containerd-$name"
  unmount_under "$d"
  for h in $(cgroup_dirs); do
    [ -d "$h$(cgroup_root "$name")" ] && find "$h$(cgroup_root "$name")" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -rf "$d"
  e2e_log "node $name stopped and removed"
}

down() {
  local names=("$@") f
  if [ ${#names[@]} -eq 0 ]; then
    [ -d "$NODES_DIR" ] || return 0
    for f in "$NODES_DIR"/*/; do [ -d "$f" ] && names+=("$(basename "$f")"); done
  fi
  local name
  for name in "${names[@]}"; do down_node "$name"; done
  rmdir "$NODES_DIR" 2>/dev/null || true
}

case "${1:-}" in
  up) shift; up "$@";;
  down) shift; down "$@";;
  *) usage;;
esac
