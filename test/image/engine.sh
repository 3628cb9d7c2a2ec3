#!/usr/bin/env bash
# The image tier's container engine and registry, on loopback, as plain processes (no systemd):
#   containerd   Debian's, with a config of its own (own root under the cache, own socket; CRI off)
#   dockerd      Debian's docker.io on that containerd, with no bridge and no iptables: containers use
#                --network host (there is no address in a private range on these machines)
#   registry     Debian's docker-registry on 127.0.0.1:<free port>, its own config and storage folder
# Installs the Debian packages when one is missing (apt-get update first; waits for another apt's lock).
#
#   test/image/engine.sh up        install if missing; start what is not running (reuses a running engine); writes
#                                  $SANDBOX_IMAGE_RUN/image.env and prints its path on stdout
#   test/image/engine.sh down      stop the registry, dockerd and containerd (only the processes started here:
#                                  each pid file holds the pid and its start time)
#   test/image/engine.sh status    exit 0 when all three run (prints image.env), 1 otherwise
#   test/image/engine.sh install   only install the packages when missing
#
# image.env (KEY=VALUE lines, for `set -a; . image.env`): DOCKER_HOST, CONTAINERD_ADDRESS, IMAGE_REGISTRY (HOST:PORT),
# DOCKER_CLI and CTR_CLI (Debian's clients: call these, not a `docker` found first on PATH).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(docker.io containerd runc containernetworking-plugins docker-registry debootstrap)

install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
  done
  if [ "${#missing[@]}" = 0 ]; then image_log "engine packages installed: ${PACKAGES[*]}"; return 0; fi
  [ "$(id -u)" = 0 ] || image_die "missing Debian packages ${missing[*]} and not root: apt-get install -y ${missing[*]}"
  local t0=$SECONDS policy=/usr/sbin/policy-rc.d own_policy=0 rc=0
  image_log "installing ${missing[*]} (apt-get update first)"
  # The packages' maintainer scripts start their services through invoke-rc.d (a system dockerd would make its
  # docker0 bridge, with an address in a private range): a policy-rc.d that refuses every start, for the install.
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 755 "$policy"; own_policy=1; fi
  { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
      "${PACKAGES[@]}"; } >&2 || rc=$?
  [ "$own_policy" = 0 ] || rm -f "$policy"
  [ "$rc" = 0 ] || image_die "apt-get install ${PACKAGES[*]} failed"
  image_log "installed in $((SECONDS - t0))s: $("$DOCKER_CLI" --version), $(containerd --version | cut -d' ' -f3)"
}

# alive NAME: true when the process recorded in pids/NAME is still the one that was started.
alive() { e2e_pidfile_alive "$IMAGE_PIDS/$1"; }

# start NAME COMMAND...: starts COMMAND detached, output appended to logs/NAME.log, pid + start time in pids/NAME.
start() {
  local name=$1; shift
  printf -- '--- image %s: starting %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$IMAGE_LOGS/$name.log"
  setsid "$@" </dev/null >>"$IMAGE_LOGS/$name.log" 2>&1 9>&- &
  local pid=$!
  echo "$pid $(e2e_proc_starttime "$pid")" >"$IMAGE_PIDS/$name"
  image_log "started $name (pid $pid, log $IMAGE_LOGS/$name.log)"
}

# wait_for NAME WHAT COMMAND...: polls COMMAND until it succeeds; fails with the end of NAME's log when NAME exits
# or after 60 s.
wait_for() {
  local name=$1 what=$2 deadline=$((SECONDS + 60)); shift 2
  until "$@" >/dev/null 2>&1; do
    if ! alive "$name"; then tail -n 30 "$IMAGE_LOGS/$name.log" >&2; image_die "$name exited before $what"; fi
    if [ "$SECONDS" -ge "$deadline" ]; then tail -n 30 "$IMAGE_LOGS/$name.log" >&2; image_die "$name: no $what in 60 s"; fi
    sleep 0.3
  done
}

# stop NAME: SIGTERM, up to 20 s, then SIGKILL; only if pids/NAME still names the process that was started.
stop() {
  local name=$1 f=$IMAGE_PIDS/$1 pid _
  [ -f "$f" ] || return 0
  read -r pid _ <"$f" || true
  if ! alive "$name"; then rm -f "$f"; return 0; fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 200); do alive "$name" || break; sleep 0.1; done
  if alive "$name"; then
    image_log "$name (pid $pid) ignored SIGTERM for 20 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
    alive "$name" && { image_log "$name (pid $pid) is still running"; return 1; }
  fi
  rm -f "$f"
  image_log "stopped $name (pid $pid)"
}

write_containerd_config() {
  # A complete config (no `imports` of Debian's): own root (kept: pulled images), own state and socket. CRI is off:
  # this containerd serves dockerd and `ctr`; a kubelet's containerd is configured by the kubelet tier.
  cat >"$IMAGE_RUN/containerd.toml" <<TOML
version = 2
root = "$IMAGE_CACHE/containerd"
state = "$IMAGE_RUN/containerd-state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = "$IMAGE_CONTAINERD_SOCK"

[plugins."io.containerd.internal.v1.opt"]
  path = "$IMAGE_CACHE/containerd/opt"
TOML
}

write_registry_config() { # PORT
  cat >"$IMAGE_RUN/registry.yml" <<YAML
version: 0.1
log:
  level: info
  fields: {service: registry}
storage:
  filesystem: {rootdirectory: $IMAGE_CACHE/registry}
  delete: {enabled: true}
http:
  addr: 127.0.0.1:$1
YAML
}

write_env() {
  local tmp=$IMAGE_ENV_FILE.tmp
  {
    echo "DOCKER_HOST=unix://$IMAGE_DOCKER_SOCK"
    echo "CONTAINERD_ADDRESS=$IMAGE_CONTAINERD_SOCK"
    echo "IMAGE_REGISTRY=127.0.0.1:$1"
    echo "DOCKER_CLI=$DOCKER_CLI"
    echo "CTR_CLI=$CTR_CLI"
  } >"$tmp"
  mv -f "$tmp" "$IMAGE_ENV_FILE"
}

registry_port() { sed -n 's/^  addr: 127.0.0.1://p' "$IMAGE_RUN/registry.yml" 2>/dev/null; }

up() {
  install_packages
  mkdir -p "$IMAGE_CACHE" "$IMAGE_LOGS" "$IMAGE_PIDS"
  # unix sockets: at most 107 bytes, and containerd appends ".ttrpc"
  [ "${#IMAGE_CONTAINERD_SOCK}" -le 100 ] || image_die "socket path too long (${#IMAGE_CONTAINERD_SOCK} > 100 bytes): $IMAGE_CONTAINERD_SOCK; set SANDBOX_IMAGE_RUN to a shorter folder"
  exec 9>"$IMAGE_CACHE/engine.lock"
  flock 9                         # one start/stop at a time for this cache's engine

  if alive containerd; then image_log "containerd already running (pid $(cut -d' ' -f1 "$IMAGE_PIDS/containerd"))"
  else
    rm -f "$IMAGE_CONTAINERD_SOCK" "$IMAGE_CONTAINERD_SOCK.ttrpc"
    mkdir -p "$IMAGE_CACHE/containerd"
    write_containerd_config
    start containerd containerd --config "$IMAGE_RUN/containerd.toml"
    wait_for containerd "answer on $IMAGE_CONTAINERD_SOCK" ctrk version
  fi

  if alive dockerd; then image_log "dockerd already running (pid $(cut -d' ' -f1 "$IMAGE_PIDS/dockerd"))"
  else
    rm -f "$IMAGE_DOCKER_SOCK" "$IMAGE_RUN/dockerd.pid"
    # BuildKit's cache (the README's build) is collected beyond 2 GB; the legacy builder's is pruned by images.sh.
    echo '{"builder": {"gc": {"enabled": true, "defaultKeepStorage": "2GB"}}}' >"$IMAGE_RUN/daemon.json"
    mkdir -p "$IMAGE_CACHE/docker"
    start dockerd dockerd --config-file "$IMAGE_RUN/daemon.json" \
      --data-root "$IMAGE_CACHE/docker" --exec-root "$IMAGE_RUN/docker-exec" --pidfile "$IMAGE_RUN/dockerd.pid" \
      --host "unix://$IMAGE_DOCKER_SOCK" --containerd "$IMAGE_CONTAINERD_SOCK" \
      --iptables=false --ip-masq=false --bridge=none --ip-forward=false --userland-proxy=false
    wait_for dockerd "answer on $IMAGE_DOCKER_SOCK" dk version
    image_log "dockerd: $(dk version -f '{{.Server.Version}}'), storage driver $(dk info -f '{{.Driver}}')"
  fi

  local port
  if alive registry && port=$(registry_port) && [ -n "$port" ]; then
    image_log "registry already running on 127.0.0.1:$port"
  else
    # the port of the last run when it is free (a stable address across runs), else a free one
    port=$(cat "$IMAGE_CACHE/registry.port" 2>/dev/null || true)
    if [ -z "$port" ] || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then port=$(e2e_free_ports 1); fi
    echo "$port" >"$IMAGE_CACHE/registry.port"
    mkdir -p "$IMAGE_CACHE/registry"
    write_registry_config "$port"
    # what earlier runs pushed and no tag names any more (each run pushes the same tags again)
    [ ! -d "$IMAGE_CACHE/registry/docker/registry/v2/repositories" ] ||
    docker-registry garbage-collect --delete-untagged "$IMAGE_RUN/registry.yml" >"$IMAGE_LOGS/registry-gc.log" 2>&1 ||
      { tail -n 20 "$IMAGE_LOGS/registry-gc.log" >&2; image_die "docker-registry garbage-collect failed"; }
    start registry docker-registry serve "$IMAGE_RUN/registry.yml"
    wait_for registry "answer on http://127.0.0.1:$port/v2/" curl -fsS "http://127.0.0.1:$port/v2/"
  fi
  write_env "$port"
  image_log "engine up: $IMAGE_ENV_FILE"
  echo "$IMAGE_ENV_FILE"
}

down() {
  mkdir -p "$IMAGE_CACHE"
  exec 9>"$IMAGE_CACHE/engine.lock"
  flock 9
  local failed=0 n
  for n in registry dockerd containerd; do stop "$n" || failed=1; done
  [ "$failed" = 0 ] || image_die "some engine processes could not be stopped; pid files left in $IMAGE_PIDS"
  # dockerd leaves its default network namespace bind-mounted in its exec root
  local m
  awk -v d="$IMAGE_RUN/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount "$m" && image_log "unmounted $m"
  done
  rm -f "$IMAGE_ENV_FILE" "$IMAGE_DOCKER_SOCK" "$IMAGE_CONTAINERD_SOCK" "$IMAGE_CONTAINERD_SOCK.ttrpc"
}

status() {
  alive containerd && alive dockerd && alive registry && [ -f "$IMAGE_ENV_FILE" ] || return 1
  cat "$IMAGE_ENV_FILE"
}

case "${1:-}" in
  up) up;;
  down) down;;
  status) status;;
  install) install_packages;;
  *) image_die "usage: engine.sh up | down | status | install";;
esac
