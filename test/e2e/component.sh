#!/usr/bin/env bash
# Restarts one component of the running e2e cluster (started by cluster-up.sh), the way an operator would:
# stop it by pid (SIGTERM, SIGKILL after 10 s; only the process cluster-up.sh recorded), start the same command
# again (its log is appended to), and wait until it is ready.
#
#   test/e2e/component.sh restart sandbox-extender [--config FILE] [--node-flags "FLAGS"]
#       the extender with its cluster-up command; --config FILE replaces its config file for this run (without
#       --config: the cluster-up config, EXTENDER_CONFIG, or none); --node-flags adds node options after `node`
#       for this run only (e.g. "--cpu-prof --cpu-prof-dir=DIR"; the next plain restart drops them). Waits for
#       /readyz (the initial lists applied in cluster mode) and fails if its log shows the API server refusing it
#       a request (403).
#   test/e2e/component.sh stop sandbox-extender / start sandbox-extender
#       the two halves of a restart of the extender (e.g. to measure the cluster without it); start runs its
#       cluster-up command (and config) and waits for /readyz as restart does.
#   test/e2e/component.sh restart kube-scheduler-sandbox | kube-scheduler-default
#       waits until healthy and its leader-election lease is held by the new process.
#   test/e2e/component.sh stop kube-scheduler-sandbox | kube-scheduler-default
#   test/e2e/component.sh start kube-scheduler-sandbox | kube-scheduler-default
#       the two halves of a restart, for a scheduler that should stay down for a while (pods created meanwhile
#       wait in the API server until start). stop prints nothing on stdout; start prints the new pid.
#   test/e2e/component.sh restart kube-apiserver
#       the API server with its cluster-up command (an outage of the whole control plane: every watch breaks, and
#       after the restart the API server's watch cache begins at the current resourceVersion, so a watch resumed
#       from an older one gets 410 Gone). Waits for /readyz (a "ready" line in its log marks the end of the window
#       in which RBAC is still loading: the 403 checks ignore refusals inside it), then for each kube-scheduler to
#       renew its lease; one that exited meanwhile (it does when it cannot renew for renewDeadline, 10 s) is started
#       again as `restart kube-scheduler-*` does. Any other component that exited fails the command.
#   test/e2e/component.sh stop kube-apiserver / start kube-apiserver
#       the two halves of that restart, for a test that acts while the API server is down (start also waits and
#       heals as above). stop prints nothing on stdout; start prints the new pid.
#   test/e2e/component.sh restart|stop|start agent-sandbox-controller
#       the controller of sigs.k8s.io/agent-sandbox with its cluster-up command (AGENT_SANDBOX=1); start and restart
#       wait until its controllers have started (informers synced). While it is stopped nothing creates, adopts or
#       suspends sandboxes: Sandboxes, claims and pools created meanwhile wait in the API server.
#   test/e2e/component.sh bind on|off
#       rewrites the sandbox scheduler's config with or without `bindVerb: bind` (on: the extender binds; off:
#       kube-scheduler binds and the extender learns the placement from its watch), restarts
#       kube-scheduler-sandbox, and records EXTENDER_BIND in cluster.env. Nothing happens when it is already so.
#   test/e2e/component.sh percentage N
#       rewrites the sandbox scheduler's config with percentageOfNodesToScore N (0–100; 0: kube-scheduler's adaptive
#       default), restarts kube-scheduler-sandbox, and records SANDBOX_PERCENTAGE in cluster.env. Nothing happens when
#       it is already so.
#   test/e2e/component.sh standby up
#       a second sandbox-scheduler + extender pair beside the first, as the Helm chart's HA mode runs them
#       (replicas: 2, one lease): sandbox-extender-standby (the extender's command on another port) and
#       kube-scheduler-sandbox-standby (the sandbox scheduler's command and configuration, calling that extender,
#       competing for the same lease). Waits until the extender is ready (its watches synced) and the scheduler
#       healthy; the standby scheduler leads only once the first one's lease is released or expires. Records
#       STANDBY_EXTENDER_URL and STANDBY_SCHEDULER_URL in cluster.env. (It takes the sandbox scheduler's
#       configuration as it is now: `bind on|off` later changes only the first one's.)
#   test/e2e/component.sh standby down
#       stops the standby pair (SIGTERM: a kube-scheduler that leads gives its lease up) and forgets its URLs.
#   test/e2e/component.sh kill NAME...
#       SIGKILL to every named component at once, as a crashed pod: no clean exit, so a scheduler that led keeps
#       its lease until it expires (leaseDuration). Prints nothing on stdout.
#
# Prints the new pid on stdout; progress goes to stderr. Exit 1 with the end of the component's log on failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { e2e_die "usage: component.sh restart sandbox-extender [--config FILE] [--node-flags FLAGS] | restart|stop|start sandbox-extender|kube-scheduler-sandbox|kube-scheduler-default|kube-apiserver|agent-sandbox-controller | bind on|off | percentage N | standby up|down | kill NAME..."; }

ENV_FILE=$E2E_STATE/cluster.env
[ -f "$ENV_FILE" ] || e2e_die "$ENV_FILE not found: is the e2e cluster up? (npm run cluster:up)"
# KEY=VALUE lines, values unquoted (CLUSTER may hold spaces): read, not sourced.
while IFS= read -r line; do
  if [[ "$line" =~ ^([A-Z_][A-Z0-9_]*)=(.*)$ ]]; then printf -v "${BASH_REMATCH[1]}" '%s' "${BASH_REMATCH[2]}"; fi
done <"$ENV_FILE"
[ -n "$(e2e_pid kube-apiserver)" ] || [ "${1:-} ${2:-}" = "start kube-apiserver" ] || e2e_die "kube-apiserver of $E2E_STATE is not running: start the cluster first"
KUBECTL_ADMIN=("$KUBECTL" "--kubeconfig=$KUBECONFIG")

# One change at a time (two restarts of the same component would race on its pid file).
exec 8>"$E2E_STATE/component.lock"
flock 8

lease_holder() { "${KUBECTL_ADMIN[@]}" -n kube-system get lease "$1" --ignore-not-found -o 'jsonpath={.spec.holderIdentity}'; }
# held_by_other LEASE OLD-HOLDER: true when LEASE is held, and not by OLD-HOLDER.
held_by_other() { local h; h=$(lease_holder "$1"); [ -n "$h" ] && [ "$h" != "$2" ]; }

restart_extender() {
  local config=${1-} node_flags=${2-}
  e2e_load_cmd sandbox-extender
  local cmd=() i=0 flags=()
  # The recorded command minus its --config (if any), plus the requested one; --node-flags go after argv[0] (node).
  [ -z "$node_flags" ] || read -r -a flags <<<"$node_flags"
  while [ "$i" -lt "${#E2E_CMD[@]}" ]; do
    if [ "${E2E_CMD[$i]}" = --config ]; then
      i=$((i + 2))
      [ -n "$config" ] || config=${E2E_CMD[$((i - 1))]}
      continue
    fi
    cmd+=("${E2E_CMD[$i]}"); i=$((i + 1))
    [ "$i" != 1 ] || cmd+=("${flags[@]}")
  done
  if [ -n "$config" ]; then
    case "$config" in /*) ;; *) config=$PWD/$config;; esac
    [ -f "$config" ] || e2e_die "config file $config not found"
    cmd+=(--config "$config")
  fi
  e2e_stop sandbox-extender || e2e_die "could not stop sandbox-extender"
  e2e_start sandbox-extender "${cmd[@]}"
  e2e_wait_for sandbox-extender "ready${config:+ (config $config)}" curl -fsS "$EXTENDER_URL/readyz"
  e2e_die_if_forbidden "$E2E_LOGS/sandbox-extender.log" "the extender"
}

# scheduler_of NAME: sets lease and url to those of kube-scheduler-sandbox or kube-scheduler-default.
scheduler_of() {
  case "$1" in
    kube-scheduler-sandbox) lease=$SANDBOX_SCHEDULER_NAME url=$SANDBOX_SCHEDULER_URL;;
    kube-scheduler-default) lease=kube-scheduler url=$DEFAULT_SCHEDULER_URL;;
  esac
}

# stop_scheduler NAME LEASE: stops the scheduler and makes sure its lease names no live process.
stop_scheduler() {
  local name=$1 lease=$2 old
  old=$(lease_holder "$lease")
  e2e_stop "$name" || e2e_die "could not stop $name"
  # kube-scheduler may give the lease up on SIGTERM (ReleaseOnCancel) or not. If not, the lease still names the
  # stopped process and the new one would wait for it to expire (leaseDuration, 15 s): the holder is gone for sure
  # (stopped above, by pid), so release the lease for it, as ReleaseOnCancel would have.
  if [ -n "$old" ] && [ "$(lease_holder "$lease")" = "$old" ]; then
    e2e_log "lease kube-system/$lease still names the stopped $name (it did not release it on its way out): deleting it, so the new process need not wait for it to expire"
    "${KUBECTL_ADMIN[@]}" -n kube-system delete lease "$lease" --ignore-not-found >/dev/null
  elif [ -n "$old" ]; then
    e2e_log "$name released lease kube-system/$lease"
  fi
}

# start_scheduler NAME LEASE URL: starts the recorded command and waits until it is healthy and holds LEASE.
start_scheduler() {
  local name=$1 lease=$2 url=$3 old
  [ -z "$(e2e_pid "$name")" ] || e2e_die "$name is already running (pid $(e2e_pid "$name"))"
  e2e_load_cmd "$name"
  old=$(lease_holder "$lease")
  e2e_start "$name" "${E2E_CMD[@]}"
  e2e_wait_for "$name" "healthy" curl -kfsS "$url/healthz"
  e2e_wait_for "$name" "leader (lease kube-system/$lease)" held_by_other "$lease" "$old"
}

# restart_scheduler NAME LEASE URL
restart_scheduler() {
  stop_scheduler "$1" "$2"
  start_scheduler "$1" "$2" "$3"
}

stop_apiserver() {
  [ -n "$(e2e_pid kube-apiserver)" ] || e2e_die "kube-apiserver is not running"
  e2e_stop kube-apiserver || e2e_die "could not stop kube-apiserver"
}

# renewed_since LEASE EPOCH-SECONDS: true when LEASE's renewTime is at or after EPOCH-SECONDS.
renewed_since() {
  local renew
  renew=$("${KUBECTL_ADMIN[@]}" -n kube-system get lease "$1" --ignore-not-found -o 'jsonpath={.spec.renewTime}') || return 1
  [ -n "$renew" ] && [ "$(date -u -d "$renew" +%s)" -ge "$2" ]
}

start_apiserver() {
  [ -z "$(e2e_pid kube-apiserver)" ] || e2e_die "kube-apiserver is already running"
  e2e_load_cmd kube-apiserver
  e2e_start kube-apiserver "${E2E_CMD[@]}"
  e2e_wait_for kube-apiserver "ready" "${KUBECTL_ADMIN[@]}" get --raw=/readyz
  local ready_at
  ready_at=$(date -u +%s)
  # Each kube-scheduler either renews its lease on the new API server or has exited (leader election lost).
  local name lease url deadline
  for name in kube-scheduler-sandbox kube-scheduler-default; do
    [ -f "$E2E_CMDS/$name" ] || continue
    scheduler_of "$name"
    deadline=$((SECONDS + 30))
    while [ -n "$(e2e_pid "$name")" ] && ! renewed_since "$lease" "$ready_at"; do
      [ "$SECONDS" -lt "$deadline" ] || e2e_die "$name neither renewed lease kube-system/$lease nor exited within 30 s of the API server's restart"
      sleep 0.5
    done
    if [ -n "$(e2e_pid "$name")" ]; then
      e2e_log "$name kept its lease kube-system/$lease through the outage"
    else
      e2e_log "$name exited during the outage (it could not renew lease kube-system/$lease): starting it again"
      restart_scheduler "$name" "$lease" "$url"
    fi
  done
  for name in etcd kube-controller-manager kwok snapshot-feeder sandbox-extender agent-sandbox-controller; do
    [ -f "$E2E_CMDS/$name" ] || continue
    [ -n "$(e2e_pid "$name")" ] || { tail -n 40 "$E2E_LOGS/$name.log" >&2 || true; e2e_die "$name exited while kube-apiserver was restarted (log above)"; }
  done
}

stop_agent_sandbox() {
  [ -f "$E2E_CMDS/agent-sandbox-controller" ] || e2e_die "this cluster runs no agent-sandbox-controller (started with AGENT_SANDBOX=0)"
  e2e_stop agent-sandbox-controller || e2e_die "could not stop agent-sandbox-controller"
}

start_agent_sandbox() {
  [ -f "$E2E_CMDS/agent-sandbox-controller" ] || e2e_die "this cluster runs no agent-sandbox-controller (started with AGENT_SANDBOX=0)"
  [ -z "$(e2e_pid agent-sandbox-controller)" ] || e2e_die "agent-sandbox-controller is already running (pid $(e2e_pid agent-sandbox-controller))"
  e2e_load_cmd agent-sandbox-controller
  e2e_start agent-sandbox-controller "${E2E_CMD[@]}"
  e2e_wait_for agent-sandbox-controller "ready (controllers ${E2E_AGENT_SANDBOX_CONTROLLERS[*]} started)" \
    e2e_agent_sandbox_started "$AGENT_SANDBOX_HEALTH_URL"
}

# set_sandbox_config BIND PERCENTAGE KEY=VALUE ALREADY DONE: rewrites the sandbox scheduler's config with BIND and
# PERCENTAGE, records KEY=VALUE in cluster.env, restarts kube-scheduler-sandbox and logs DONE; logs ALREADY instead
# when the config is already so and the scheduler runs.
set_sandbox_config() {
  local config
  config=$(e2e_sandbox_scheduler_config "$E2E_STATE/pki/kube-scheduler.kubeconfig" "$EXTENDER_URL" "$SANDBOX_SCHEDULER_NAME" "$1" "$2")
  if [ "$config" = "$(cat "$SANDBOX_SCHEDULER_CONFIG")" ] && [ -n "$(e2e_pid kube-scheduler-sandbox)" ]; then
    e2e_log "$4"
    return
  fi
  printf '%s\n' "$config" >"$SANDBOX_SCHEDULER_CONFIG.tmp"
  mv "$SANDBOX_SCHEDULER_CONFIG.tmp" "$SANDBOX_SCHEDULER_CONFIG"
  sed -i "s/^${3%%=*}=.*/$3/" "$ENV_FILE"
  restart_scheduler kube-scheduler-sandbox "$SANDBOX_SCHEDULER_NAME" "$SANDBOX_SCHEDULER_URL"
  e2e_log "$5"
}

set_bind() {
  local want=$1
  [ "$want" = 0 ] || [ "$EXTENDER_MODE" = cluster ] || e2e_die "bind on needs the extender in cluster mode (EXTENDER_MODE=$EXTENDER_MODE)"
  set_sandbox_config "$want" "${SANDBOX_PERCENTAGE:-100}" "EXTENDER_BIND=$want" \
    "bind is already $([ "$want" = 1 ] && echo on || echo off)" \
    "bind $([ "$want" = 1 ] && echo on: the extender binds || echo off: kube-scheduler binds)"
}

# set_percentage N: the sandbox scheduler's percentageOfNodesToScore (bind as it is), as set_bind does for bind.
set_percentage() {
  e2e_check_percentage percentage "$1"
  local want=$((10#$1))
  [ -n "$SANDBOX_SCHEDULER_URL" ] || e2e_die "this cluster runs no sandbox-scheduler (started with SANDBOX_SCHEDULER=0)"
  set_sandbox_config "${EXTENDER_BIND:-1}" "$want" "SANDBOX_PERCENTAGE=$want" "percentageOfNodesToScore is already $want" \
    "percentageOfNodesToScore $want$([ "$want" = 0 ] && echo " (kube-scheduler's adaptive default)")"
}

# The standby pair (standby up): the extender's recorded command on another port, the sandbox scheduler's on
# another secure port with a copy of its configuration that calls the standby extender.
standby_up() {
  [ "$EXTENDER_MODE" = cluster ] || e2e_die "the standby pair needs the extender in cluster mode (EXTENDER_MODE=$EXTENDER_MODE)"
  [ -z "$(e2e_pid sandbox-extender-standby)$(e2e_pid kube-scheduler-sandbox-standby)" ] || e2e_die "the standby pair is already running"
  local p_ext p_sched
  read -r p_ext p_sched <<<"$(e2e_free_ports 2)"
  [ -n "$p_sched" ] || e2e_die "could not pick free ports on 127.0.0.1"
  local ext_url=http://127.0.0.1:$p_ext sched_url=https://127.0.0.1:$p_sched cmd=() i=0 a
  e2e_load_cmd sandbox-extender
  while [ "$i" -lt "${#E2E_CMD[@]}" ]; do
    if [ "${E2E_CMD[$i]}" = --port ]; then cmd+=(--port "$p_ext"); i=$((i + 2)); continue; fi
    cmd+=("${E2E_CMD[$i]}"); i=$((i + 1))
  done
  e2e_save_cmd sandbox-extender-standby "${cmd[@]}"
  e2e_start sandbox-extender-standby "${cmd[@]}"
  local config=$E2E_STATE/kube-scheduler-sandbox-standby.yaml
  sed "s#urlPrefix: \"$EXTENDER_URL\"#urlPrefix: \"$ext_url\"#" "$SANDBOX_SCHEDULER_CONFIG" >"$config"
  grep -q "urlPrefix: \"$ext_url\"" "$config" || e2e_die "could not point a copy of $SANDBOX_SCHEDULER_CONFIG at the standby extender"
  e2e_load_cmd kube-scheduler-sandbox
  cmd=()
  for a in "${E2E_CMD[@]}"; do
    case "$a" in
      --config=*) cmd+=("--config=$config");;
      --secure-port=*) cmd+=("--secure-port=$p_sched");;
      *) cmd+=("$a");;
    esac
  done
  e2e_save_cmd kube-scheduler-sandbox-standby "${cmd[@]}"
  e2e_start kube-scheduler-sandbox-standby "${cmd[@]}"
  e2e_wait_for sandbox-extender-standby "ready (standby)" curl -fsS "$ext_url/readyz"
  e2e_wait_for kube-scheduler-sandbox-standby "healthy (standby)" curl -kfsS "$sched_url/healthz"
  e2e_die_if_forbidden "$E2E_LOGS/sandbox-extender-standby.log" "the standby extender"
  sed -i '/^STANDBY_\(EXTENDER\|SCHEDULER\)_URL=/d' "$ENV_FILE"
  printf 'STANDBY_EXTENDER_URL=%s\nSTANDBY_SCHEDULER_URL=%s\n' "$ext_url" "$sched_url" >>"$ENV_FILE"
  e2e_log "standby pair up: extender $ext_url, kube-scheduler $sched_url (lease kube-system/$SANDBOX_SCHEDULER_NAME held by $(lease_holder "$SANDBOX_SCHEDULER_NAME"))"
}

standby_down() {
  local holder led=0
  holder=$(lease_holder "$SANDBOX_SCHEDULER_NAME")
  # Whether the standby scheduler led (its log since its start says it acquired the lease).
  [ -f "$E2E_LOGS/kube-scheduler-sandbox-standby.log" ] \
    && grep -q 'successfully acquired lease' <<<"$(sed -n '/^--- e2e .*: starting /h; /^--- e2e .*: starting /!H; ${x;p}' "$E2E_LOGS/kube-scheduler-sandbox-standby.log")" && led=1
  e2e_stop kube-scheduler-sandbox-standby || e2e_die "could not stop kube-scheduler-sandbox-standby"
  # As stop_scheduler does: a leader that did not give its lease up on its way out leaves it naming a stopped process.
  if [ "$led" = 1 ] && [ -n "$holder" ] && [ "$(lease_holder "$SANDBOX_SCHEDULER_NAME")" = "$holder" ]; then
    e2e_log "lease kube-system/$SANDBOX_SCHEDULER_NAME still names the stopped standby scheduler: deleting it"
    "${KUBECTL_ADMIN[@]}" -n kube-system delete lease "$SANDBOX_SCHEDULER_NAME" --ignore-not-found >/dev/null
  fi
  e2e_stop sandbox-extender-standby || e2e_die "could not stop sandbox-extender-standby"
  rm -f "$E2E_CMDS/kube-scheduler-sandbox-standby" "$E2E_CMDS/sandbox-extender-standby"
  sed -i '/^STANDBY_\(EXTENDER\|SCHEDULER\)_URL=/d' "$ENV_FILE"
}

# kill_components NAME...: SIGKILL to each (only the process that was started: pid + start time), then waits
# until all are gone and removes their pid files.
kill_components() {
  local name pid _
  [ $# -gt 0 ] || usage
  for name in "$@"; do e2e_pidfile_alive "$E2E_PIDS/$name" || e2e_die "$name is not running"; done
  for name in "$@"; do
    read -r pid _ <"$E2E_PIDS/$name"
    kill -KILL "$pid" 2>/dev/null || true
  done
  for name in "$@"; do
    for _ in $(seq 1 100); do e2e_pidfile_alive "$E2E_PIDS/$name" || break; sleep 0.05; done
    e2e_pidfile_alive "$E2E_PIDS/$name" && e2e_die "$name is still running after SIGKILL"
    rm -f "$E2E_PIDS/$name"
    printf -- '--- e2e %s: killed (SIGKILL)\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" >>"$E2E_LOGS/$name.log"
    e2e_log "killed $name (SIGKILL)"
  done
}

case "${1:-}" in
  standby)
    [ $# -eq 2 ] || usage
    case "$2" in up) standby_up;; down) standby_down;; *) usage;; esac;;
  kill)
    shift
    kill_components "$@";;
  restart)
    case "${2:-}" in
      sandbox-extender)
        config= node_flags=
        shift 2
        while [ $# -gt 0 ]; do
          case "$1" in
            --config) [ -n "${2:-}" ] || usage; config=$2; shift 2;;
            --node-flags) [ -n "${2:-}" ] || usage; node_flags=$2; shift 2;;
            *) usage;;
          esac
        done
        set -- restart sandbox-extender
        restart_extender "$config" "$node_flags";;
      kube-scheduler-sandbox|kube-scheduler-default) [ $# -eq 2 ] || usage; scheduler_of "$2"; restart_scheduler "$2" "$lease" "$url";;
      kube-apiserver) [ $# -eq 2 ] || usage; stop_apiserver; start_apiserver;;
      agent-sandbox-controller) [ $# -eq 2 ] || usage; stop_agent_sandbox; start_agent_sandbox;;
      *) usage;;
    esac
    e2e_pid "$2";;
  stop|start)
    [ $# -eq 2 ] || usage
    case "$1 $2" in
      "stop sandbox-extender") e2e_stop sandbox-extender || e2e_die "could not stop sandbox-extender";;
      "start sandbox-extender")
        [ -z "$(e2e_pid sandbox-extender)" ] || e2e_die "sandbox-extender is already running (pid $(e2e_pid sandbox-extender))"
        restart_extender "" "";;
      "stop kube-apiserver") stop_apiserver;;
      "start kube-apiserver") start_apiserver;;
      "stop agent-sandbox-controller") stop_agent_sandbox;;
      "start agent-sandbox-controller") start_agent_sandbox;;
      "stop kube-scheduler-sandbox"|"stop kube-scheduler-default") scheduler_of "$2"; stop_scheduler "$2" "$lease";;
      "start kube-scheduler-sandbox"|"start kube-scheduler-default") scheduler_of "$2"; start_scheduler "$2" "$lease" "$url";;
      *) usage;;
    esac
    [ "$1" = stop ] || e2e_pid "$2";;  # start prints the new pid, stop nothing
  bind)
    [ $# -eq 2 ] || usage
    case "$2" in on) set_bind 1;; off) set_bind 0;; *) usage;; esac
    e2e_pid kube-scheduler-sandbox;;
  percentage)
    [ $# -eq 2 ] || usage
    set_percentage "$2"
    e2e_pid kube-scheduler-sandbox;;
  *) usage;;
esac
