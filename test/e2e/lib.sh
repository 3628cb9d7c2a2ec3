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
# Binaries are keyed by the pinned versions plus a short hash of the committed go.mod/go.sum files of the
# control-plane modules (named, in this order, so another tools module does not move the key), so a version
# bump or a dependency change builds into a new folder and an unchanged tree builds nothing.
E2E_CONTROL_PLANE_MODULES=(etcd helm k8s kwok)
tools_files=("$TOOLS_DIR"/versions.env)
for f in go.mod go.sum; do for m in "${E2E_CONTROL_PLANE_MODULES[@]}"; do tools_files+=("$TOOLS_DIR/$m/$f"); done; done
tools_hash=$(cat "${tools_files[@]}" | sha256sum | cut -c1-12)
E2E_BIN=$E2E_CACHE/bin/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-helm-$HELM_VERSION-$tools_hash
unset tools_hash tools_files f m
E2E_BINARIES=(kube-apiserver kube-scheduler kube-controller-manager kubectl etcd kwok helm)

# The differential accounting oracle (tools/accounting: component-helpers PodRequests, ParseQuantity) is small
# and built apart, keyed by its own files, so changing it never rebuilds the control plane (and vice versa).
accounting_hash=$(cat "$TOOLS_DIR"/versions.env "$TOOLS_DIR"/accounting/go.mod "$TOOLS_DIR"/accounting/go.sum \
  "$TOOLS_DIR"/accounting/*.go | sha256sum | cut -c1-12)
E2E_ACCOUNTING_BIN=$E2E_CACHE/bin/accounting-k8s-$K8S_VERSION-$accounting_hash/k8s-accounting
unset accounting_hash

# The kubelet of the real nodes (kubelet.sh; tools/kubelet: k8s.io/kubernetes/cmd/kubelet with tools/k8s's pins, in a
# module of its own) goes into a folder keyed by its own files and KUBELET_RECIPE (raise it when build-tools.sh
# builds it differently), so building it never invalidates the control plane's folder (and vice versa). It is
# compiled with the control plane's flags and tags into the same Go build cache, so most of its packages are hits.
KUBELET_RECIPE=1
kubelet_hash=$({ echo "$KUBELET_RECIPE"; cat "$TOOLS_DIR"/versions.env "$TOOLS_DIR"/kubelet/go.mod "$TOOLS_DIR"/kubelet/go.sum; } | sha256sum | cut -c1-12)
E2E_KUBELET_BIN=$E2E_CACHE/bin/kubelet-$K8S_VERSION-$kubelet_hash/kubelet
unset kubelet_hash

# The benchmark tools, built only on request (build-tools.sh --scheduler-perf / --loadgen), never by the e2e tier,
# each into a folder keyed by its own files: kube-scheduler's scheduler_perf harness as a test binary, with the
# harness's config and templates beside it (the scheduler-perf scenario), and the load generator of the ceiling scenario.
# The key also covers how build-tools.sh builds them (BENCH_TOOLS_RECIPE: raise it when that changes).
BENCH_TOOLS_RECIPE=2
bench_hash() { { echo "$BENCH_TOOLS_RECIPE"; cat "$TOOLS_DIR"/versions.env "$TOOLS_DIR/$1"/go.mod "$TOOLS_DIR/$1"/go.sum "$TOOLS_DIR/$1"/*.go; } | sha256sum | cut -c1-12; }
E2E_SCHEDULER_PERF_DIR=$E2E_CACHE/bin/scheduler-perf-k8s-$K8S_VERSION-$(bench_hash scheduler-perf)
E2E_LOADGEN_BIN=$E2E_CACHE/bin/loadgen-$(bench_hash loadgen)/loadgen
unset -f bench_hash

# agent-sandbox-controller (tools/agent-sandbox: sigs.k8s.io/agent-sandbox, the controller of Sandbox, SandboxTemplate,
# SandboxClaim and SandboxWarmPool) is built apart too, keyed by its own go.mod/go.sum: bumping it never rebuilds
# the control plane. The pinned version is the module's require line in its go.mod. The folder also holds the
# module's CRDs as published (crds/), which cluster-up.sh serves at v1beta1 only (agent-sandbox-crds.mjs).
AGENT_SANDBOX_VERSION=$(sed -n 's|^[[:space:]]*sigs.k8s.io/agent-sandbox \(v[^ ]*\).*|\1|p' "$TOOLS_DIR"/agent-sandbox/go.mod)
agent_sandbox_hash=$(cat "$TOOLS_DIR"/agent-sandbox/go.mod "$TOOLS_DIR"/agent-sandbox/go.sum | sha256sum | cut -c1-12)
E2E_AGENT_SANDBOX_DIR=$E2E_CACHE/bin/agent-sandbox-$AGENT_SANDBOX_VERSION-$agent_sandbox_hash
E2E_AGENT_SANDBOX_BIN=$E2E_AGENT_SANDBOX_DIR/agent-sandbox-controller
unset agent_sandbox_hash

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
  read -r pid start 2>/dev/null <"$1" || return 1   # 2> first: a missing file is "not alive", not an error message
  now=$(e2e_proc_starttime "$pid")
  [ -n "$now" ] && [ "$now" = "$start" ]
}

# ------------------------------------------------------------------------------------- processes of a cluster
# Shared by cluster-up.sh, component.sh and cluster-down.sh. Every process is started detached from the caller's
# terminal, its output appended to logs/NAME.log (a restart appends, after a "--- e2e:" marker line), its pid and
# start time written to pids/NAME. cmd/NAME holds the argv cluster-up.sh started it with (NUL-separated), so that
# component.sh can start exactly that command again.
E2E_LOGS=$E2E_STATE/logs
E2E_PIDS=$E2E_STATE/pids
E2E_CMDS=$E2E_STATE/cmd
E2E_TIMEOUT=${E2E_START_TIMEOUT:-120}   # seconds e2e_wait_for waits for one condition

# e2e_start NAME COMMAND...: starts COMMAND in the background as component NAME.
e2e_start() {
  local name=$1; shift
  mkdir -p "$E2E_LOGS" "$E2E_PIDS"
  printf -- '--- e2e %s: starting %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$*" >>"$E2E_LOGS/$name.log"
  "$@" </dev/null >>"$E2E_LOGS/$name.log" 2>&1 8>&- &   # 8: component.sh's lock, not for the child
  local pid=$!
  echo "$pid $(e2e_proc_starttime "$pid")" >"$E2E_PIDS/$name"
  e2e_log "started $name (pid $pid)"
}

# e2e_save_cmd NAME COMMAND...: records COMMAND as the way to (re)start NAME.
e2e_save_cmd() {
  local name=$1; shift
  mkdir -p "$E2E_CMDS"
  printf '%s\0' "$@" >"$E2E_CMDS/$name"
}

# e2e_load_cmd NAME: the recorded command of NAME into the array E2E_CMD.
e2e_load_cmd() {
  [ -f "$E2E_CMDS/$1" ] || e2e_die "no recorded command for $1 in $E2E_CMDS (was the cluster started by cluster-up.sh?)"
  # shellcheck disable=SC2034  # E2E_CMD is read by the caller
  mapfile -d '' -t E2E_CMD <"$E2E_CMDS/$1"
}

# e2e_pid NAME: the pid of component NAME (empty when it is not running).
e2e_pid() {
  local pid _
  e2e_pidfile_alive "$E2E_PIDS/$1" || return 0
  read -r pid _ <"$E2E_PIDS/$1"
  echo "$pid"
}

# e2e_wait_for NAME WHAT COMMAND...: polls COMMAND (every 0.5 s) until it succeeds, then writes a
# "--- e2e <UTC time, ms>: WHAT" line to NAME's log (the evidence forbidden.mjs reads: when kube-apiserver was ready);
# fails fast, with the end of NAME's log, when the process NAME exits or after E2E_TIMEOUT seconds.
e2e_wait_for() {
  local name=$1 what=$2; shift 2
  local deadline=$((SECONDS + E2E_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if ! e2e_pidfile_alive "$E2E_PIDS/$name"; then
      tail -n 40 "$E2E_LOGS/$name.log" >&2 || true
      e2e_die "$name exited before $what (log above, full log: $E2E_LOGS/$name.log)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 40 "$E2E_LOGS/$name.log" >&2 || true
      e2e_die "$name: $what not reached within ${E2E_TIMEOUT}s (log above, full log: $E2E_LOGS/$name.log)"
    fi
    sleep 0.5
  done
  printf -- '--- e2e %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$what" >>"$E2E_LOGS/$name.log"
  e2e_log "$name: $what"
}

# e2e_stop NAME: SIGTERM to the process recorded in pids/NAME (only if it is still the process that was started),
# up to 10 s for it to exit, then SIGKILL. Removes the pid file. Returns 1 when the process cannot be stopped.
e2e_stop() {
  local name=$1 f=$E2E_PIDS/$1 pid _
  [ -f "$f" ] || return 0
  read -r pid _ <"$f" || true
  if ! e2e_pidfile_alive "$f"; then
    e2e_log "$name (pid ${pid:-?}) is not running"
    rm -f "$f"; return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do                       # up to 10 s for a clean exit
    e2e_pidfile_alive "$f" || break
    sleep 0.1
  done
  if e2e_pidfile_alive "$f"; then
    e2e_log "$name (pid $pid) ignored SIGTERM for 10s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
    if e2e_pidfile_alive "$f"; then e2e_log "$name (pid $pid) is still running"; return 1; fi
  fi
  e2e_log "stopped $name (pid $pid)"
  rm -f "$f"
}

# e2e_check_percentage NAME VALUE: dies unless VALUE is a percentageOfNodesToScore, an integer 0–100.
e2e_check_percentage() {
  case "$2" in ""|*[!0-9]*) e2e_die "$1 must be an integer 0–100, not '$2'";; esac
  [ "$((10#$2))" -le 100 ] || e2e_die "$1 must be 0–100, not $2"
}

# e2e_forbidden LOGFILE: prints the lines of an extender log that show the API server refusing a request
# (HTTP 403, "forbidden"), leaving out those logged while kube-apiserver was starting and had not loaded RBAC yet
# (between a start and the "ready" line in its log: forbidden.mjs); true when there are any.
e2e_forbidden() {
  node "$E2E_DIR/forbidden.mjs" "$1" "$E2E_LOGS/kube-apiserver.log"
}

# e2e_die_if_forbidden LOGFILE WHO: when there are such lines, shows them and dies (WHO: the extender that logged them).
e2e_die_if_forbidden() {
  local forbidden
  forbidden=$(e2e_forbidden "$1") || return 0
  echo "$forbidden" >&2
  e2e_die "the API server refused $2 a request (above): manifests/sandbox-extender-rbac.yaml lacks a permission"
}

# e2e_sandbox_scheduler_config KUBECONFIG EXTENDER_URL SCHEDULER_NAME BIND(0|1) [PERCENTAGE]: prints the
# KubeSchedulerConfiguration of the sandbox-scheduler process. Extenders apply to every profile of a
# kube-scheduler process, so that process has only its own profile; its score plugins are off, so the
# extender's prioritize alone ranks the nodes. With BIND=1 the extender also binds (bindVerb).
e2e_sandbox_scheduler_config() {
  cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$1", qps: 200, burst: 400}
leaderElection:
  leaderElect: true
  resourceLock: leases
  resourceNamespace: kube-system
  resourceName: $3
percentageOfNodesToScore: ${5:-100}
profiles:
  - schedulerName: $3
    plugins:
      score:
        disabled: [{name: "*"}]
extenders:
  - urlPrefix: "$2"
    filterVerb: filter
    prioritizeVerb: prioritize
YAML
  [ "$4" = 1 ] && echo "    bindVerb: bind"
  cat <<YAML
    weight: 1
    nodeCacheCapable: true
    httpTimeout: 5s
    ignorable: false
YAML
}

# ------------------------------------------------------------------------------------- agent-sandbox-controller
# The controllers one agent-sandbox-controller --extensions process runs (controller-runtime names them after the
# kind they reconcile).
E2E_AGENT_SANDBOX_CONTROLLERS=(sandbox sandboxclaim sandboxtemplate sandboxwarmpool)

# e2e_agent_sandbox_started HEALTH-URL: true when the controller's /readyz answers and, since its last start (the
# last "--- e2e ...: starting" line of its log), every one of its controllers has logged "Starting workers", which
# controller-runtime does once that controller's informers have synced.
e2e_agent_sandbox_started() {
  curl -fsS "$1/readyz" >/dev/null 2>&1 || return 1
  local log=$E2E_LOGS/agent-sandbox-controller.log c
  local since started
  since=$(awk '/^--- e2e .*: starting /{n=NR} END{print n+0}' "$log")
  # Read whole before matching: a pipe into `grep -q` fails under pipefail when grep stops reading at its match.
  started=$(tail -n "+$since" "$log" | grep '"msg":"Starting workers"') || return 1
  for c in "${E2E_AGENT_SANDBOX_CONTROLLERS[@]}"; do
    grep -q "\"controller\":\"$c\"" <<<"$started" || return 1
  done
}
