# shellcheck shell=bash
# Shared settings of the e2e scripts (sourced, not run). Every path is derived from the repository root,
# $SANDBOX_E2E_CACHE / $XDG_CACHE_HOME / $HOME, or $SANDBOX_E2E_STATE; nothing machine-specific is written here.
#
#   SANDBOX_E2E_CACHE  build cache (Go module + build caches, binaries)
#                      default ${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-extender-e2e
#   SANDBOX_E2E_STATE  state of a running cluster (pids/, logs/, pki/, etcd/, kubeconfig), default <repo>/.e2e

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
TOOLS_DIR=$E2E_DIR/tools
# shellcheck source=tools/versions.env
. "$TOOLS_DIR/versions.env"

E2E_CACHE=${SANDBOX_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-extender-e2e}
# Binaries are keyed by the pinned versions plus a short hash of the committed go.mod/go.sum files, so a
# version bump or a dependency change builds into a new folder and an unchanged tree builds nothing.
tools_hash=$(cat "$TOOLS_DIR"/versions.env "$TOOLS_DIR"/*/go.mod "$TOOLS_DIR"/*/go.sum | sha256sum | cut -c1-12)
E2E_BIN=$E2E_CACHE/bin/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-helm-$HELM_VERSION-$tools_hash
unset tools_hash
E2E_BINARIES=(kube-apiserver kube-scheduler kube-controller-manager kubectl etcd kwok helm)

E2E_STATE=${SANDBOX_E2E_STATE:-$REPO_ROOT/.e2e}
# shellcheck disable=SC2034  # used by the scripts that source this file
E2E_KUBECONFIG=$E2E_STATE/kubeconfig

e2e_log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
e2e_die() { printf '[e2e %s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

e2e_tools_complete() {
  local b
  for b in "${E2E_BINARIES[@]}"; do [ -x "$E2E_BIN/$b" ] || return 1; done
  [ -d "$E2E_BIN/kwok-stages" ] || return 1
}

# Prints N distinct free TCP ports on 127.0.0.1 (the kernel picks them: listen on port 0, all at once, then close).
e2e_free_ports() {
  node -e '
    const net = require("node:net");
    const n = Number(process.argv[1]);
    const servers = Array.from({ length: n }, () => net.createServer());
    Promise.all(servers.map((s) => new Promise((ok, bad) => { s.once("error", bad); s.listen(0, "127.0.0.1", ok); })))
      .then(() => { console.log(servers.map((s) => s.address().port).join(" ")); servers.forEach((s) => s.close()); })
      .catch((e) => { console.error(e.message); process.exit(1); });
  ' "$1"
}

# Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat), to tell a process we started
# from a later one that reuses its pid. Empty when the process is gone or a zombie.
e2e_proc_starttime() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }                  # drop "pid (comm) ", comm may contain spaces
  # shellcheck disable=SC2086  # split on purpose: $1 = state, $20 = starttime
  set -- $stat
  [ "$1" = Z ] || echo "${20}"
}

# True when the pid file names a process that is still the one that was started.
e2e_pidfile_alive() {
  local pid start now
  read -r pid start <"$1" 2>/dev/null || return 1
  now=$(e2e_proc_starttime "$pid")
  [ -n "$now" ] && [ "$now" = "$start" ]
}
