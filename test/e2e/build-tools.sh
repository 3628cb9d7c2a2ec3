#!/usr/bin/env bash
# Builds the e2e control-plane binaries from the Go module proxy (no Docker, no release downloads):
#   kube-apiserver kube-scheduler kube-controller-manager kubectl  (test/e2e/tools/k8s)
#   etcd (tools/etcd)   kwok (tools/kwok)   helm (tools/helm)
# plus the KWOK stage files, into  $SANDBOX_E2E_CACHE/bin/<versions-key>/ .
# The Go module and build caches live under $SANDBOX_E2E_CACHE too, so a fresh machine is cold and a second run
# on the same machine builds nothing (it only checks that every binary is there).
#
#   test/e2e/build-tools.sh            build what is missing
#   test/e2e/build-tools.sh --print-bin  print the binary folder and exit (builds nothing)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = "--print-bin" ]; then echo "$E2E_BIN"; exit 0; fi

command -v go >/dev/null || e2e_die "go is not installed (need Go >= $GO_LINE)"
if e2e_tools_complete; then e2e_log "tools up to date: $E2E_BIN"; exit 0; fi

mkdir -p "$E2E_CACHE"
exec 9>"$E2E_CACHE/build.lock"
flock 9                                   # one build at a time per cache
if e2e_tools_complete; then e2e_log "tools up to date: $E2E_BIN"; exit 0; fi

export GOMODCACHE=$E2E_CACHE/gomod GOCACHE=$E2E_CACHE/go-build
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-modcacherw   # -modcacherw: the cache can be removed with rm -rf
go_version=$(go env GOVERSION)
case "$go_version" in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) e2e_die "Go $go_version is too old: the tools modules need go >= $GO_LINE (GOTOOLCHAIN=local, no auto-download)";;
esac

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

# Kubernetes: the same -X version stamps as upstream hack/lib/version.sh, so `--version` prints the release
# (without them it says v0.0.0-master+$Format:%H$), and upstream's tags for static release binaries.
k8s_minor=${K8S_VERSION#v1.}; k8s_minor=${k8s_minor%%.*}
k8s_ld="-s -w"
for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  k8s_ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$k8s_minor -X $p.gitTreeState=clean"
  k8s_ld+=" -X $p.buildDate=1970-01-01T00:00:00Z"
done
k8s_tags=selinux,notest,grpcnotrace
# The first build compiles the shared dependency tree; the other three mostly link.
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  build "$b" k8s "$k8s_ld" -tags "$k8s_tags" "k8s.io/kubernetes/cmd/$b"
done

build etcd etcd "-s -w" go.etcd.io/etcd/server/v3
build kwok kwok "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok

helm_k8s_minor=$(sed -n 's|^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*|\1|p' "$TOOLS_DIR/helm/go.mod")
helm_ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  helm_ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$helm_k8s_minor"
done
build helm helm "$helm_ld" helm.sh/helm/v3/cmd/helm

# KWOK stage files (pod/node lifecycle for the fake nodes); the standalone kwok has none built in.
kwok_src=$(cd "$TOOLS_DIR/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
rm -rf "$PARTIAL/kwok-stages"; mkdir -p "$PARTIAL/kwok-stages"
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  [ -f "$kwok_src/kustomize/stage/$f" ] || e2e_die "KWOK stage $f not found in $kwok_src"
  cp "$kwok_src/kustomize/stage/$f" "$PARTIAL/kwok-stages/"
done
chmod u+w "$PARTIAL/kwok-stages"/*

# Fail fast if a binary does not run or reports a wrong version. The output is read whole before grep: with
# `cmd | grep -q`, grep exits at the first match, a command still writing (etcd prints four lines) dies of SIGPIPE,
# and pipefail fails the check although the version was right.
has_line() { local out; out=$("${@:2}" 2>&1) && grep -q -- "$1" <<<"$out"; }
has_line "^Kubernetes $K8S_VERSION\$" "$PARTIAL/kube-apiserver" --version || e2e_die "kube-apiserver --version: $("$PARTIAL/kube-apiserver" --version)"
has_line "Client Version: $K8S_VERSION" "$PARTIAL/kubectl" version --client || e2e_die "kubectl version: $("$PARTIAL/kubectl" version --client)"
has_line "etcd Version: ${ETCD_VERSION#v}" "$PARTIAL/etcd" --version || e2e_die "etcd --version: $("$PARTIAL/etcd" --version)"
has_line "^$HELM_VERSION" "$PARTIAL/helm" version --short || e2e_die "helm version: $("$PARTIAL/helm" version --short)"
"$PARTIAL/kwok" --help >/dev/null || e2e_die "kwok does not run"

rm -rf "$E2E_BIN"; mv "$PARTIAL" "$E2E_BIN"
e2e_log "all tools built in $((SECONDS - t_all))s: $E2E_BIN"
du -sh "$E2E_BIN" "$GOMODCACHE" "$GOCACHE" >&2 || true
