#!/usr/bin/env bash
# Builds the e2e control-plane binaries from the Go module proxy (no Docker, no release downloads):
#   kube-apiserver kube-scheduler kube-controller-manager kubectl  (test/e2e/tools/k8s)
#   etcd (tools/etcd)   kwok (tools/kwok)   helm (tools/helm)
# plus the KWOK stage files, into  $SANDBOX_E2E_CACHE/bin/<versions-key>/ .
# The Go module and build caches live under $SANDBOX_E2E_CACHE too, so a fresh machine is cold and a second run
# on the same machine builds nothing (it only checks that every binary is there).
#
# Built apart, each into a folder of its own under $SANDBOX_E2E_CACHE/bin/ (keyed by the tool's own files: lib.sh)
# with a lock of its own, so that no build invalidates or waits for another: the differential accounting oracle
# (tools/accounting; about 20 s cold), agent-sandbox-controller and the module's CRDs (tools/agent-sandbox; about
# 2 min cold on 2 cores, see test/e2e/README.md), the kubelet of the real nodes (tools/kubelet; about 5 min cold on
# 2 cores alone, less when the control plane's packages are in the cache), and two benchmark tools (npm run bench --
# scheduler-perf, the ceiling scenario) that the e2e tier never builds.
#
#   test/e2e/build-tools.sh                   build what is missing (not the benchmark tools)
#   test/e2e/build-tools.sh --print-bin       print the binary folder and exit (builds nothing)
#   test/e2e/build-tools.sh --accounting      build only the accounting oracle if missing; print its path
#   test/e2e/build-tools.sh --agent-sandbox   build only agent-sandbox-controller (+ CRDs) if missing; print its path
#   test/e2e/build-tools.sh --kubelet         build only the kubelet of the real nodes if missing; print its path
#   test/e2e/build-tools.sh --scheduler-perf  build only kube-scheduler's scheduler_perf harness (a test binary, with
#                                             its config and templates) if missing; print its folder
#   test/e2e/build-tools.sh --loadgen         build only the ceiling scenario's load generator if missing; print its path
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

# go_in MODULE WHAT GO-ARGS...: runs go in the tools module test/e2e/tools/MODULE; dies naming WHAT if that fails.
go_in() {
  local module=$1 what=$2; shift 2
  (cd "$TOOLS_DIR/$module" && go "$@") \
    || e2e_die "building $what failed (module test/e2e/tools/$module); see the go output above"
}

# module_dir MODULE GO-MODULE: the folder of GO-MODULE in the module cache, at the version tools/MODULE requires.
module_dir() { (cd "$TOOLS_DIR/$1" && go list -m -f '{{.Dir}}' "$2"); }

# copy_files WHAT FROM TO FILE...: copies each FILE (a path under FROM) into the folder TO, writable (the module
# cache's files are read-only); dies if one is missing.
copy_files() {
  local what=$1 from=$2 to=$3 f; shift 3
  for f in "$@"; do
    [ -f "$from/$f" ] || e2e_die "$what $f not found in $from"
    cp "$from/$f" "$to/"
  done
  chmod u+w "$to"/*
}

# Fail fast if a binary does not run or reports a wrong version. The output is captured first: piping it
# into `grep -q` would let grep exit at the first match and the writer die of SIGPIPE, which pipefail
# reports as a failure (it did, for etcd's multi-line --version).
expect_version() { # WHAT PATTERN COMMAND...
  local what=$1 pattern=$2 out; shift 2
  out=$("$@" 2>&1) || e2e_die "$what failed: $out"
  grep -qE "$pattern" <<<"$out" || e2e_die "$what: $out"
}

# build_apart MODULE WHAT DIR BUILD BINARY [FILE...]: a tool built apart (see the top of this file). Nothing happens
# when DIR/BINARY is executable and every DIR/FILE is there; else, holding $E2E_CACHE/MODULE-build.lock, the
# function BUILD fills DIR.partial (its one argument), which then replaces DIR whole, so that an interrupted build
# leaves no half folder behind. WHAT names the tool in the log.
build_apart() {
  local module=$1 what=$2 dir=$3 build=$4 lock t0
  shift 4
  apart_complete "$dir" "$@" && return 0
  mkdir -p "$E2E_CACHE"
  exec {lock}>"$E2E_CACHE/$module-build.lock"
  flock "$lock"
  if ! apart_complete "$dir" "$@"; then
    check_go_version
    t0=$SECONDS
    rm -rf "$dir.partial"; mkdir -p "$dir.partial"
    e2e_log "$what: building (test/e2e/tools/$module) into $dir"
    "$build" "$dir.partial"
    rm -rf "$dir"; mv "$dir.partial" "$dir"
    e2e_log "$what: done in $((SECONDS - t0))s ($(du -h "$dir/$1" | cut -f1))"
  fi
  exec {lock}>&-
}
apart_complete() { # DIR BINARY [FILE...]
  local dir=$1 f; shift
  [ -x "$dir/$1" ] || return 1
  for f in "${@:2}"; do [ -f "$dir/$f" ] || return 1; done
}

# The differential accounting oracle.
accounting_into() {
  go_in accounting k8s-accounting build -trimpath -ldflags "-s -w" -o "$1/k8s-accounting" .
}
build_accounting() { build_apart accounting k8s-accounting "${E2E_ACCOUNTING_BIN%/*}" accounting_into k8s-accounting; }

# agent-sandbox-controller from the Go module proxy, and the module's CRDs (data, copied as published; cluster-up.sh
# rewrites them to serve v1beta1 only).
agent_sandbox_into() {
  go_in agent-sandbox agent-sandbox-controller build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/agent-sandbox/internal/version.gitVersion=$AGENT_SANDBOX_VERSION" \
    -o "$1/agent-sandbox-controller" sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller
  local src
  src=$(module_dir agent-sandbox sigs.k8s.io/agent-sandbox)/k8s/crds
  mkdir "$1/crds"
  copy_files CRD "$src" "$1/crds" \
    agents.x-k8s.io_sandboxes.yaml extensions.agents.x-k8s.io_sandboxclaims.yaml \
    extensions.agents.x-k8s.io_sandboxtemplates.yaml extensions.agents.x-k8s.io_sandboxwarmpools.yaml
  expect_version "agent-sandbox-controller --version" "version $AGENT_SANDBOX_VERSION " "$1/agent-sandbox-controller" --version
}
build_agent_sandbox() {
  build_apart agent-sandbox agent-sandbox-controller "$E2E_AGENT_SANDBOX_DIR" agent_sandbox_into agent-sandbox-controller
}

# The kubelet (tools/kubelet), with the control plane's version stamps and tags (k8s_ld, k8s_tags).
kubelet_into() {
  go_in kubelet "the kubelet" build -trimpath -tags "$k8s_tags" -ldflags "$k8s_ld" -o "$1/kubelet" \
    k8s.io/kubernetes/cmd/kubelet
  expect_version "kubelet --version" "^Kubernetes $K8S_VERSION\$" "$1/kubelet" --version
}
build_kubelet() { build_apart kubelet kubelet "${E2E_KUBELET_BIN%/*}" kubelet_into kubelet; }

# kube-scheduler's benchmark harness, test/integration/scheduler_perf of k8s.io/kubernetes, compiled as the test
# binary of tools/scheduler-perf (its own go.mod: the staging replaces of tools/k8s plus the harness's test
# dependencies), and the harness's own performance config and templates copied from the module beside it:
#   <folder>/scheduler-perf.test   <folder>/scheduler_perf/misc/performance-config.yaml   <folder>/scheduler_perf/templates/
# The harness starts etcd from $PATH; the runner puts the e2e tools' etcd there. Cold: about as long as the
# kube-apiserver build (the same dependency tree, compiled again for the test binary).
scheduler_perf_into() {
  local src
  # No -trimpath: the harness's API server finds its test certificates through the absolute path of its own
  # source file (cmd/kube-apiserver/app/testing: pkgPath), in the module cache.
  go_in scheduler-perf "the scheduler_perf harness" test -c -o "$1/scheduler-perf.test" .
  src=$(module_dir scheduler-perf k8s.io/kubernetes)/test/integration/scheduler_perf
  [ -f "$src/misc/performance-config.yaml" ] || e2e_die "no misc/performance-config.yaml in $src"
  mkdir -p "$1/scheduler_perf"
  cp -R "$src/misc" "$src/templates" "$1/scheduler_perf/"
  chmod -R u+w "$1/scheduler_perf"
}
build_scheduler_perf() {
  build_apart scheduler-perf scheduler-perf "$E2E_SCHEDULER_PERF_DIR" scheduler_perf_into \
    scheduler-perf.test scheduler_perf/misc/performance-config.yaml
}

# The open-loop load generator of the ceiling scenario (tools/loadgen, vegeta's library); a few seconds cold.
loadgen_into() { go_in loadgen loadgen build -trimpath -ldflags "-s -w" -o "$1/loadgen" .; }
build_loadgen() { build_apart loadgen loadgen "${E2E_LOADGEN_BIN%/*}" loadgen_into loadgen; }

case "${1:-}" in
  --accounting) build_accounting; echo "$E2E_ACCOUNTING_BIN"; exit 0;;
  --agent-sandbox) build_agent_sandbox; echo "$E2E_AGENT_SANDBOX_BIN"; exit 0;;
  --kubelet) build_kubelet; echo "$E2E_KUBELET_BIN"; exit 0;;
  --scheduler-perf) build_scheduler_perf; echo "$E2E_SCHEDULER_PERF_DIR"; exit 0;;
  --loadgen) build_loadgen; echo "$E2E_LOADGEN_BIN"; exit 0;;
esac

# The control plane is complete: only the tools built apart may be missing.
up_to_date() { build_accounting; build_agent_sandbox; build_kubelet; e2e_log "tools up to date: $E2E_BIN"; exit 0; }
if e2e_tools_complete; then up_to_date; fi

mkdir -p "$E2E_CACHE"
exec 9>"$E2E_CACHE/build.lock"
flock 9                                   # one build at a time per cache
if e2e_tools_complete; then flock -u 9; up_to_date; fi
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
  go_in "$dir" "$name" build -trimpath -ldflags "$ldflags" -o "$PARTIAL/.$name.tmp" "$@"
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
  go_in k8s "${missing[*]}" build -trimpath -ldflags "$k8s_ld" -tags "$k8s_tags" -o "$PARTIAL/.k8s.tmp/" \
    "${missing[@]/#/k8s.io/kubernetes/cmd/}"
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
kwok_stages=$(module_dir kwok sigs.k8s.io/kwok)/kustomize/stage
rm -rf "$PARTIAL/kwok-stages"; mkdir -p "$PARTIAL/kwok-stages"
copy_files "KWOK stage" "$kwok_stages" "$PARTIAL/kwok-stages" node/fast/node-initialize.yaml \
  node/heartbeat-with-lease/node-heartbeat-with-lease.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml \
  pod/fast/pod-delete.yaml
expect_version "kube-apiserver --version" "^Kubernetes $K8S_VERSION\$" "$PARTIAL/kube-apiserver" --version
expect_version "kubectl version" "Client Version: $K8S_VERSION" "$PARTIAL/kubectl" version --client
expect_version "etcd --version" "etcd Version: ${ETCD_VERSION#v}" "$PARTIAL/etcd" --version
expect_version "helm version" "^$HELM_VERSION" "$PARTIAL/helm" version --short
"$PARTIAL/kwok" --help >/dev/null || e2e_die "kwok does not run"

rm -rf "$E2E_BIN"; mv "$PARTIAL" "$E2E_BIN"
e2e_log "all tools built in $((SECONDS - t_all))s: $E2E_BIN"
du -sh "$E2E_BIN" "$GOMODCACHE" "$GOCACHE" >&2 || true
