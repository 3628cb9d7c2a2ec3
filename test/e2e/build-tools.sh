#!/usr/bin/env bash
# Builds the e2e control-plane binaries from the Go module proxy (no Docker, no release downloads):
#   kube-apiserver kube-scheduler kube-controller-manager kubectl  (test/e2e/tools/k8s)
#   etcd (tools/etcd)   kwok (tools/kwok)   helm (tools/helm)
# plus the KWOK stage files, into  $SANDBOX_E2E_CACHE/bin/<versions-key>/ .
# The Go module and build caches live under $SANDBOX_E2E_CACHE too, so a fresh machine is cold and a second run
# on the same machine builds nothing (it only checks that every binary is there).
#
# The differential accounting oracle (tools/accounting; about 20 s to build cold) goes into a folder of its own,
# $SANDBOX_E2E_CACHE/bin/accounting-<version>-<hash of its files>/, so neither build invalidates the other.
#
#   test/e2e/build-tools.sh                   build what is missing
#   test/e2e/build-tools.sh --print-bin       print the binary folder and exit (builds nothing)
# agent-sandbox-controller (tools/agent-sandbox) and the module's CRDs go into
# $SANDBOX_E2E_CACHE/bin/agent-sandbox-<version>-<hash of its go.mod/go.sum>/ in the same way, with a lock of their
# own: about 2 min to build cold on 2 cores (see test/e2e/README.md).
#
#   test/e2e/build-tools.sh --accounting      build only the accounting oracle if missing; print its path
#   test/e2e/build-tools.sh --scheduler-perf  build only kube-scheduler's scheduler_perf harness (a test binary, with
#                                             its config and templates) if missing; print its folder
#   test/e2e/build-tools.sh --loadgen         build only the ceiling scenario's load generator if missing; print its path
# The last two are benchmark tools (npm run bench -- scheduler-perf, the ceiling scenario): never built by the e2e tier.
#   test/e2e/build-tools.sh --agent-sandbox   build only agent-sandbox-controller (+ CRDs) if missing; print its path
#   test/e2e/build-tools.sh --kubelet         build only the kubelet of the real nodes (tools/kubelet) if missing; print
#                                             its path. Its own folder and lock, like the oracle; about 5 min cold on
#                                             2 cores alone, less when the control plane's packages are in the cache.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = "--print-bin" ]; then echo "$E2E_BIN"; exit 0; fi

command -v go >/dev/null || e2e_die "go is not installed (need Go >= $GO_LINE)"
export GOMODCACHE=$E2E_CACHE/gomod GOCACHE=$E2E_CACHE/go-build
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-modcacherw   # -modcacherw: the cache can be removed with rm -rf

# Kubernetes: the same -X version stamps as upstream hack/lib/version.sh, so `--version` prints the release
# (without them it says v0.0.0-master+$Format:%H$), and upstream's tags for static release binaries.
k8s_minor=${K8S_VERSION#v1.}; k8s_minor=${k8s_minor%%.*}
k8s_ld="-s -w"
for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  k8s_ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$k8s_minor -X $p.gitTreeState=clean"
  k8s_ld+=" -X $p.buildDate=1970-01-01T00:00:00Z"
done
k8s_tags=selinux,notest,grpcnotrace

check_go_version() {
  go_version=$(go env GOVERSION)
  case "$go_version" in
    go1.2[6-9]*|go1.[3-9][0-9]*) ;;
    *) e2e_die "Go $go_version is too old: the tools modules need go >= $GO_LINE (GOTOOLCHAIN=local, no auto-download)";;
  esac
}

# The accounting oracle: its own lock, so it never waits for (or blocks) a control-plane build.
build_accounting() {
  [ -x "$E2E_ACCOUNTING_BIN" ] && return 0
  mkdir -p "$E2E_CACHE"
  exec 7>"$E2E_CACHE/accounting-build.lock"
  flock 7
  if [ ! -x "$E2E_ACCOUNTING_BIN" ]; then
    check_go_version
    local dir t0=$SECONDS
    dir=$(dirname "$E2E_ACCOUNTING_BIN")
    mkdir -p "$dir"
    e2e_log "k8s-accounting: go build (test/e2e/tools/accounting) into $dir"
    (cd "$TOOLS_DIR/accounting" && go build -trimpath -ldflags "-s -w" -o "$dir/.k8s-accounting.tmp" .) \
      || e2e_die "building k8s-accounting failed (module test/e2e/tools/accounting); see the go output above"
    mv -f "$dir/.k8s-accounting.tmp" "$E2E_ACCOUNTING_BIN"
    e2e_log "k8s-accounting: done in $((SECONDS - t0))s"
  fi
  exec 7>&-
}

# agent-sandbox-controller from the Go module proxy, and the module's CRDs (data, copied as published; cluster-up.sh
# rewrites them to serve v1beta1 only). Its own lock and folder, like the oracle.
build_agent_sandbox() {
  [ -x "$E2E_AGENT_SANDBOX_BIN" ] && return 0
  mkdir -p "$E2E_CACHE"
  exec 6>"$E2E_CACHE/agent-sandbox-build.lock"
  flock 6
  if [ ! -x "$E2E_AGENT_SANDBOX_BIN" ]; then
    check_go_version
    local dir=$E2E_AGENT_SANDBOX_DIR partial=$E2E_AGENT_SANDBOX_DIR.partial t0=$SECONDS src f
    rm -rf "$partial"; mkdir -p "$partial/crds"
    e2e_log "agent-sandbox-controller $AGENT_SANDBOX_VERSION: go build (test/e2e/tools/agent-sandbox) into $dir"
    local ld="-s -w -X sigs.k8s.io/agent-sandbox/internal/version.gitVersion=$AGENT_SANDBOX_VERSION"
    (cd "$TOOLS_DIR/agent-sandbox" && go build -trimpath -ldflags "$ld" -o "$partial/agent-sandbox-controller" \
        sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller) \
      || e2e_die "building agent-sandbox-controller failed (module test/e2e/tools/agent-sandbox); see the go output above"
    src=$(cd "$TOOLS_DIR/agent-sandbox" && go list -m -f '{{.Dir}}' sigs.k8s.io/agent-sandbox)
    for f in agents.x-k8s.io_sandboxes extensions.agents.x-k8s.io_sandboxclaims \
             extensions.agents.x-k8s.io_sandboxtemplates extensions.agents.x-k8s.io_sandboxwarmpools; do
      [ -f "$src/k8s/crds/$f.yaml" ] || e2e_die "CRD $f.yaml not found in $src/k8s/crds"
      cp "$src/k8s/crds/$f.yaml" "$partial/crds/"
    done
    chmod u+w "$partial/crds"/*
    local out
    out=$("$partial/agent-sandbox-controller" --version 2>&1) || e2e_die "agent-sandbox-controller --version failed: $out"
    grep -q "version $AGENT_SANDBOX_VERSION " <<<"$out" || e2e_die "agent-sandbox-controller --version: $out"
    rm -rf "$dir"; mv "$partial" "$dir"
    e2e_log "agent-sandbox-controller: done in $((SECONDS - t0))s ($(du -h "$E2E_AGENT_SANDBOX_BIN" | cut -f1))"
  fi
  exec 6>&-
}

# The kubelet (tools/kubelet): the control plane's version stamps and tags (k8s_ld, k8s_tags), its own lock and folder.
build_kubelet() {
  [ -x "$E2E_KUBELET_BIN" ] && return 0
  mkdir -p "$E2E_CACHE"
  exec 5>"$E2E_CACHE/kubelet-build.lock"
  flock 5
  if [ ! -x "$E2E_KUBELET_BIN" ]; then
    check_go_version
    local dir partial t0=$SECONDS out
    dir=$(dirname "$E2E_KUBELET_BIN"); partial=$dir.partial
    rm -rf "$partial"; mkdir -p "$partial"
    e2e_log "kubelet $K8S_VERSION: go build (test/e2e/tools/kubelet) into $dir"
    (cd "$TOOLS_DIR/kubelet" && go build -trimpath -tags "$k8s_tags" -ldflags "$k8s_ld" -o "$partial/kubelet" \
        k8s.io/kubernetes/cmd/kubelet) \
      || e2e_die "building the kubelet failed (module test/e2e/tools/kubelet); see the go output above"
    out=$("$partial/kubelet" --version 2>&1) || e2e_die "kubelet --version failed: $out"
    [ "$out" = "Kubernetes $K8S_VERSION" ] || e2e_die "kubelet --version: $out"
    rm -rf "$dir"; mv "$partial" "$dir"
    e2e_log "kubelet: done in $((SECONDS - t0))s ($(du -h "$E2E_KUBELET_BIN" | cut -f1))"
  fi
  exec 5>&-
}

if [ "${1:-}" = "--accounting" ]; then build_accounting; echo "$E2E_ACCOUNTING_BIN"; exit 0; fi

# kube-scheduler's benchmark harness, test/integration/scheduler_perf of k8s.io/kubernetes, compiled as the test
# binary of tools/scheduler-perf (its own go.mod: the staging replaces of tools/k8s plus the harness's test
# dependencies), and the harness's own performance config and templates copied from the module beside it:
#   <folder>/scheduler-perf.test   <folder>/scheduler_perf/misc/performance-config.yaml   <folder>/scheduler_perf/templates/
# The harness starts etcd from $PATH; the runner puts the e2e tools' etcd there. Cold: about as long as the
# kube-apiserver build (the same dependency tree, compiled again for the test binary).
build_scheduler_perf() {
  local dir=$E2E_SCHEDULER_PERF_DIR
  [ -x "$dir/scheduler-perf.test" ] && [ -f "$dir/scheduler_perf/misc/performance-config.yaml" ] && return 0
  mkdir -p "$E2E_CACHE"
  exec 7>"$E2E_CACHE/scheduler-perf-build.lock"
  flock 7
  if [ ! -x "$dir/scheduler-perf.test" ] || [ ! -f "$dir/scheduler_perf/misc/performance-config.yaml" ]; then
    check_go_version
    local t0=$SECONDS src
    rm -rf "$dir.partial"; mkdir -p "$dir.partial"
    e2e_log "scheduler-perf: go test -c (test/e2e/tools/scheduler-perf, k8s.io/kubernetes $K8S_VERSION) into $dir"
    # No -trimpath: the harness's API server finds its test certificates through the absolute path of its own
    # source file (cmd/kube-apiserver/app/testing: pkgPath), in the module cache.
    (cd "$TOOLS_DIR/scheduler-perf" && go test -c -o "$dir.partial/scheduler-perf.test" .) \
      || e2e_die "building the scheduler_perf harness failed (module test/e2e/tools/scheduler-perf); see the go output above"
    src=$(cd "$TOOLS_DIR/scheduler-perf" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/integration/scheduler_perf
    [ -f "$src/misc/performance-config.yaml" ] || e2e_die "no misc/performance-config.yaml in $src"
    mkdir -p "$dir.partial/scheduler_perf"
    cp -R "$src/misc" "$src/templates" "$dir.partial/scheduler_perf/"
    chmod -R u+w "$dir.partial/scheduler_perf"
    rm -rf "$dir"; mv "$dir.partial" "$dir"
    e2e_log "scheduler-perf: done in $((SECONDS - t0))s ($(du -h "$dir/scheduler-perf.test" | cut -f1))"
  fi
  exec 7>&-
}

# The open-loop load generator of the ceiling scenario (tools/loadgen, vegeta's library); a few seconds cold.
build_loadgen() {
  [ -x "$E2E_LOADGEN_BIN" ] && return 0
  check_go_version
  local dir
  dir=$(dirname "$E2E_LOADGEN_BIN")
  mkdir -p "$dir"
  e2e_log "loadgen: go build (test/e2e/tools/loadgen) into $dir"
  (cd "$TOOLS_DIR/loadgen" && go build -trimpath -ldflags "-s -w" -o "$dir/.loadgen.tmp" .) \
    || e2e_die "building loadgen failed (module test/e2e/tools/loadgen); see the go output above"
  mv -f "$dir/.loadgen.tmp" "$E2E_LOADGEN_BIN"
}

if [ "${1:-}" = "--scheduler-perf" ]; then build_scheduler_perf; echo "$E2E_SCHEDULER_PERF_DIR"; exit 0; fi
if [ "${1:-}" = "--loadgen" ]; then build_loadgen; echo "$E2E_LOADGEN_BIN"; exit 0; fi
if [ "${1:-}" = "--agent-sandbox" ]; then build_agent_sandbox; echo "$E2E_AGENT_SANDBOX_BIN"; exit 0; fi
if [ "${1:-}" = "--kubelet" ]; then build_kubelet; echo "$E2E_KUBELET_BIN"; exit 0; fi
if e2e_tools_complete; then build_accounting; build_agent_sandbox; build_kubelet; e2e_log "tools up to date: $E2E_BIN"; exit 0; fi

mkdir -p "$E2E_CACHE"
exec 9>"$E2E_CACHE/build.lock"
flock 9                                   # one build at a time per cache
if e2e_tools_complete; then flock -u 9; build_accounting; build_agent_sandbox; build_kubelet; e2e_log "tools up to date: $E2E_BIN"; exit 0; fi
check_go_version

PARTIAL=$E2E_BIN.partial                 # binaries land here one by one; the folder is renamed when complete
mkdir -p "$PARTIAL"
e2e_log "building into $E2E_BIN with $go_version (GOMODCACHE and GOCACHE under $E2E_CACHE)"

# build <name> <tools-subdir> <ldflags> <extra go build args...> <package>
build() {
  local name=$1 dir=$2 ldflags=$3; shift 3
  if [ -x "$PARTIAL/$name" ]; then e2e_log "$name: already built"; return; fi
  local t0=$SECONDS
  e2e_log "$name: go build $*"
  (cd "$TOOLS_DIR/$dir" && go build -trimpath -ldflags "$ldflags" -o "$PARTIAL/.$name.tmp" "$@") \
    || e2e_die "building $name failed (module test/e2e/tools/$dir); see the go output above"
  mv -f "$PARTIAL/.$name.tmp" "$PARTIAL/$name"
  e2e_log "$name: done in $((SECONDS - t0))s ($(du -h "$PARTIAL/$name" | cut -f1))"
}

t_all=$SECONDS

k8s_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

# The four Kubernetes commands in one go build: their shared dependency tree is compiled once and the four links
# run side by side (one build after another left a core idle through each link).
build_k8s() {
  local missing=() b t0=$SECONDS
  for b in "${k8s_cmds[@]}"; do [ -x "$PARTIAL/$b" ] || missing+=("$b"); done
  [ "${#missing[@]}" -gt 0 ] || return 0
  e2e_log "${missing[*]}: go build -tags $k8s_tags (one build)"
  rm -rf "$PARTIAL/.k8s.tmp"; mkdir -p "$PARTIAL/.k8s.tmp"
  (cd "$TOOLS_DIR/k8s" && go build -trimpath -ldflags "$k8s_ld" -tags "$k8s_tags" -o "$PARTIAL/.k8s.tmp/" \
      "${missing[@]/#/k8s.io/kubernetes/cmd/}") \
    || e2e_die "building ${missing[*]} failed (module test/e2e/tools/k8s); see the go output above"
  for b in "${missing[@]}"; do mv -f "$PARTIAL/.k8s.tmp/$b" "$PARTIAL/$b"; done
  rm -rf "$PARTIAL/.k8s.tmp"
  e2e_log "${missing[*]}: done in $((SECONDS - t0))s"
}

helm_k8s_minor=$(sed -n 's|^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*|\1|p' "$TOOLS_DIR/helm/go.mod")
helm_ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  helm_ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$helm_k8s_minor"
done

# Everything that is not k8s.io/kubernetes, one module after another, in a second lane beside the Kubernetes build:
# each module has serial phases (loading, linking) that would leave a core idle.
other_lane() {
  build_accounting
  build_agent_sandbox
  build etcd etcd "-s -w" go.etcd.io/etcd/server/v3
  build kwok kwok "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok
  build helm helm "$helm_ld" helm.sh/helm/v3/cmd/helm
}
other_lane & other_pid=$!
trap 'kill "$other_pid" 2>/dev/null || true' EXIT
build_k8s
build_kubelet     # after the other Kubernetes commands: it reuses most of their compiled packages
wait "$other_pid" || e2e_die "the second build lane failed (accounting oracle, agent-sandbox-controller, etcd, kwok or helm); see above"
trap - EXIT

# KWOK stage files (pod/node lifecycle for the fake nodes); the standalone kwok has none built in.
kwok_src=$(cd "$TOOLS_DIR/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
rm -rf "$PARTIAL/kwok-stages"; mkdir -p "$PARTIAL/kwok-stages"
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  [ -f "$kwok_src/kustomize/stage/$f" ] || e2e_die "KWOK stage $f not found in $kwok_src"
  cp "$kwok_src/kustomize/stage/$f" "$PARTIAL/kwok-stages/"
done
chmod u+w "$PARTIAL/kwok-stages"/*

# Fail fast if a binary does not run or reports a wrong version. The output is captured first: piping it
# into `grep -q` would let grep exit at the first match and the writer die of SIGPIPE, which pipefail
# reports as a failure (it did, for etcd's multi-line --version).
expect_version() { # WHAT PATTERN COMMAND...
  local what=$1 pattern=$2 out; shift 2
  out=$("$@" 2>&1) || e2e_die "$what failed: $out"
  grep -qE "$pattern" <<<"$out" || e2e_die "$what: $out"
}
expect_version "kube-apiserver --version" "^Kubernetes $K8S_VERSION\$" "$PARTIAL/kube-apiserver" --version
expect_version "kubectl version" "Client Version: $K8S_VERSION" "$PARTIAL/kubectl" version --client
expect_version "etcd --version" "etcd Version: ${ETCD_VERSION#v}" "$PARTIAL/etcd" --version
expect_version "helm version" "^$HELM_VERSION" "$PARTIAL/helm" version --short
"$PARTIAL/kwok" --help >/dev/null || e2e_die "kwok does not run"

rm -rf "$E2E_BIN"; mv "$PARTIAL" "$E2E_BIN"
e2e_log "all tools built in $((SECONDS - t_all))s: $E2E_BIN"
du -sh "$E2E_BIN" "$GOMODCACHE" "$GOCACHE" >&2 || true
