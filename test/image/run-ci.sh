#!/usr/bin/env bash
# The image tier, as CI runs it (from .ci/run): the extender's image built and run as users build and run it,
# with no registry to pull from (test/image/README.md):
#   engine      Debian's containerd, dockerd (no bridge, no iptables) and docker-registry on 127.0.0.1, installed
#               when missing (test/image/engine.sh)
#   base        the Dockerfile's base images made locally (debootstrap, the machine's node) (images.sh base)
#   pause       a static pause binary in a scratch image, for a node's containerd (images.sh pause)
#   scheduler   the e2e tier's kube-scheduler (built by test/e2e/build-tools.sh when missing) as the chart's
#               default kube-scheduler image (images.sh kube-scheduler)
#   build       the Dockerfile through its build arguments (legacy builder), then the README's `docker build ...
#               && docker push ...` line as written, the registry's address for REGISTRY (BuildKit)
#   run         each build as the chart runs it: uid 65532, read-only root filesystem, no capabilities, no new
#               privileges, host network on free loopback ports; /healthz, /readyz, every examples/requests/*.json
#               answered as the checkout answers it; the chart's metrics-gateway command from the same image; a
#               clean exit on SIGTERM
#   registry    the pushed image pulled back by the engine (local tag removed first) and by containerd (ctr)
#   export      docker save of the extender, kube-scheduler and pause images, each imported into containerd
#
# Everything it starts is stopped on exit, unless SANDBOX_IMAGE_KEEP=1 (the engine and the registry are left
# running for a next tier; `test/image/engine.sh down` stops them) or the engine was already running when it
# started. Prints the time of each step and a closing "image tier finished in Ns" line; the summary (names,
# addresses, tarballs) is $SANDBOX_IMAGE_RUN/images.env.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

t0=$SECONDS
step() { image_log "== $1 ($((SECONDS - t0))s elapsed)"; }
KEEP=${SANDBOX_IMAGE_KEEP:-0}
LABEL=sandbox-extender-image-check        # every container the tier runs carries this label
engine_was_running=0
bash "$IMAGE_DIR/engine.sh" status >/dev/null 2>&1 && engine_was_running=1
local_pid=

on_exit() {
  local rc=$? c
  set +e
  if dk version >/dev/null 2>&1; then
    for c in $(dk ps -aq --filter "label=$LABEL"); do dk rm -f "$c" >/dev/null; done
  fi
  [ -n "$local_pid" ] && kill "$local_pid" 2>/dev/null
  if [ "$KEEP" = 1 ]; then image_log "SANDBOX_IMAGE_KEEP=1: engine and registry left running ($IMAGE_ENV_FILE)"
  elif [ "$engine_was_running" = 1 ]; then image_log "the engine was running before this tier: left running"
  else bash "$IMAGE_DIR/engine.sh" down; fi
  image_log "image tier finished in $((SECONDS - t0))s (exit $rc)"
  exit "$rc"
}
trap on_exit EXIT

# ------------------------------------------------------------------------------------------------ helpers
# build_log NAME COMMAND...: runs COMMAND with its output in logs/NAME.log; on failure, the end of it.
build_log() {
  local name=$1 t=$SECONDS; shift
  "$@" >"$IMAGE_LOGS/$name.log" 2>&1 || { tail -n 40 "$IMAGE_LOGS/$name.log" >&2; image_die "$name failed (log above: $IMAGE_LOGS/$name.log)"; }
  image_log "$name: $((SECONDS - t))s"
}

# run_check NAME ARGS...: docker run -d, labelled, named $LABEL-NAME; prints the container id.
run_check() { local name=$1; shift; dk rm -f "$LABEL-$name" >/dev/null 2>&1 || true; dk run -d --label "$LABEL" --name "$LABEL-$name" "$@"; }

# wait_http URL CONTAINER: polls URL until it answers 200; fails with the container's log if it exits or after 60 s.
wait_http() {
  local deadline=$((SECONDS + 60))
  until curl -fsS -o /dev/null "$1" 2>/dev/null; do
    if [ "$(dk inspect -f '{{.State.Running}}' "$2")" != true ]; then dk logs "$2" >&2; image_die "$2 exited before $1 answered"; fi
    [ "$SECONDS" -lt "$deadline" ] || { dk logs "$2" >&2; image_die "no answer on $1 within 60 s"; }
    sleep 0.3
  done
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { [ "$2" = "$3" ] || image_die "$1: got '$2', expected '$3'"; image_log "$1: $2"; }

# as_run_by_chart CONTAINER: the container's process runs as the chart's securityContext asks.
as_run_by_chart() {
  local pid status
  pid=$(dk inspect -f '{{.State.Pid}}' "$1")
  status=$(cat "/proc/$pid/status")
  expect_eq "$1: uid (real, effective, saved, fs)" "$(awk '/^Uid:/ {print $2, $3, $4, $5}' <<<"$status")" "65532 65532 65532 65532"
  expect_eq "$1: effective capabilities" "$(awk '/^CapEff:/ {print $2}' <<<"$status")" "0000000000000000"
  expect_eq "$1: bounding capabilities" "$(awk '/^CapBnd:/ {print $2}' <<<"$status")" "0000000000000000"
  expect_eq "$1: no new privileges" "$(awk '/^NoNewPrivs:/ {print $2}' <<<"$status")" "1"
  expect_eq "$1: root filesystem mount options" "$(awk '$5 == "/" {print $6}' "/proc/$pid/mountinfo" | cut -d, -f1)" "ro"
}

# stop_cleanly CONTAINER: docker stop (SIGTERM, then SIGKILL after 10 s); the process must exit 0 by itself.
stop_cleanly() {
  dk stop -t 10 "$1" >/dev/null
  expect_eq "$1: exit code after SIGTERM" "$(dk inspect -f '{{.State.ExitCode}}' "$1")" 0
}

# The chart's security context as docker flags (values.yaml podSecurityContext + containerSecurityContext).
SECURE=(--user 65532:65532 --read-only --cap-drop ALL --security-opt no-new-privileges)

# check_extender IMAGE: everything the chart and the README ask of the extender's image.
check_extender() {
  local img=$1 port gport lport c
  expect_eq "$img: USER" "$(dk image inspect -f '{{.Config.User}}' "$img")" "65532:65532"
  expect_eq "$img: CMD (the chart passes args only)" "$(dk image inspect -f '{{json .Config.Cmd}}' "$img")" '["serve"]'
  if out=$(dk run --rm --label "$LABEL" --network none --entrypoint /bin/sh "$img" -c true 2>&1); then
    image_die "$img has a shell (/bin/sh ran): the runtime image is meant to have none"
  fi
  grep -q '"/bin/sh": stat /bin/sh: no such file or directory' <<<"$out" || { echo "$out" >&2; image_die "$img: /bin/sh did not run, but not for want of a shell"; }
  image_log "$img: no shell (/bin/sh: no such file or directory)"
  # The runtime's node_modules: exactly the lock's production packages (check-node-modules.mjs).
  local listing summary out
  # shellcheck disable=SC2016  # a node script
  listing=$(dk run --rm --label "$LABEL" "${SECURE[@]}" --network none --entrypoint node "$img" -e '
    const fs = require("fs");
    const walk = (dir) => fs.readdirSync(`/app/${dir}`, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith(".")).flatMap((e) =>
      e.name.startsWith("@") ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`, ...(fs.existsSync(`/app/${dir}/${e.name}/node_modules`) ? walk(`${dir}/${e.name}/node_modules`) : [])]);
    console.log(walk("node_modules").join("\n"));') || image_die "$img: listing /app/node_modules failed"
  summary=$(node "$IMAGE_DIR/check-node-modules.mjs" package-lock.json <<<"$listing") ||
    image_die "$img: node_modules is not the lock's production packages"
  image_log "$img: node_modules: $summary"

  read -r port gport lport <<<"$(e2e_free_ports 3)"
  # serve, snapshot mode, as the README's `docker run` does (the snapshot mounted read-only)
  c=$(run_check serve "${SECURE[@]}" --network host -v "$REPO_ROOT/examples/snapshot.json:/examples/snapshot.json:ro" \
      "$img" serve --snapshot /examples/snapshot.json --host 127.0.0.1 --port "$port")
  wait_http "http://127.0.0.1:$port/healthz" "$c"
  as_run_by_chart "$LABEL-serve"
  # the same source from the checkout, for the expected answers
  node bin/sandbox-extender.js serve --snapshot examples/snapshot.json --host 127.0.0.1 --port "$lport" \
    >"$IMAGE_LOGS/checkout-serve.log" 2>&1 &
  local_pid=$!
  until curl -fsS -o /dev/null "http://127.0.0.1:$lport/healthz" 2>/dev/null; do
    kill -0 "$local_pid" 2>/dev/null || { cat "$IMAGE_LOGS/checkout-serve.log" >&2; image_die "the checkout's serve exited"; }
    sleep 0.3
  done
  node "$IMAGE_DIR/compare-answers.mjs" "http://127.0.0.1:$port" "http://127.0.0.1:$lport" examples/requests
  kill "$local_pid"; wait "$local_pid" 2>/dev/null || true; local_pid=

  # the chart's metrics-gateway container: `command: [node, <configDir>/gateway/metrics-gateway.mjs]`, the script
  # mounted from the chart's files, in front of the extender on loopback
  c=$(run_check gateway "${SECURE[@]}" --network host \
      -v "$REPO_ROOT/charts/sandbox-extender/files/metrics-gateway.mjs:/etc/sandbox-extender/gateway/metrics-gateway.mjs:ro" \
      -e "GATEWAY_LISTEN=127.0.0.1:$gport" -e "GATEWAY_UPSTREAM=http://127.0.0.1:$port" \
      --entrypoint node "$img" /etc/sandbox-extender/gateway/metrics-gateway.mjs)
  wait_http "http://127.0.0.1:$gport/livez" "$c"
  as_run_by_chart "$LABEL-gateway"
  expect_eq "gateway GET /readyz" "$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$gport/readyz")" "ok 200"
  expect_eq "gateway GET /healthz" "$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$gport/healthz")" "ok 200"
  # Read whole before matching: `curl | grep -q` fails under pipefail when grep stops reading at its match.
  gateway_metrics=$(curl -fsS "http://127.0.0.1:$gport/metrics") || image_die "gateway GET /metrics failed"
  grep -q '^sandbox_extender_http_requests_total{verb="filter",code="200"} ' <<<"$gateway_metrics" ||
    image_die "gateway GET /metrics: no sandbox_extender_http_requests_total for the Filter calls"
  image_log "gateway GET /metrics: the extender's metrics"
  expect_eq "gateway POST /filter (not forwarded)" "$(curl -sS -o /dev/null -w '%{http_code}' -XPOST "http://127.0.0.1:$gport/filter")" 405
  expect_eq "gateway GET /debug/nodes (not forwarded)" "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$gport/debug/nodes")" 404
  stop_cleanly "$LABEL-gateway"
  stop_cleanly "$LABEL-serve"
  dk rm "$LABEL-gateway" "$LABEL-serve" >/dev/null
}

# ------------------------------------------------------------------------------------------------ steps
step "engine: containerd, dockerd, registry"
bash "$IMAGE_DIR/engine.sh" up >/dev/null
REGISTRY=$(image_registry)
[ -n "$REGISTRY" ] || image_die "no registry address in $IMAGE_ENV_FILE"
mkdir -p "$IMAGE_LOGS"

step "base images"
bash "$IMAGE_DIR/images.sh" base
# shellcheck source=/dev/null
. "$IMAGE_RUN/base-images.env"
for pair in "$IMAGE_BUILD_DEFAULT=$BUILD_IMAGE" "$IMAGE_RUNTIME_DEFAULT=$RUNTIME_IMAGE"; do
  expect_eq "${pair%%=*} is" "$(dk image inspect -f '{{.Id}}' "${pair%%=*}")" "$(dk image inspect -f '{{.Id}}' "${pair#*=}")"
done
expect_eq "$IMAGE_BUILD_DEFAULT: node" "$(dk run --rm --label "$LABEL" --network none "$IMAGE_BUILD_DEFAULT" node --version)" "$(node --version)"
expect_eq "$IMAGE_BUILD_DEFAULT: npm" "$(dk run --rm --label "$LABEL" --network none "$IMAGE_BUILD_DEFAULT" npm --version)" "$(npm --version)"
expect_eq "$IMAGE_RUNTIME_DEFAULT: node as uid 65532" \
  "$(dk run --rm --label "$LABEL" "${SECURE[@]}" --network none "$IMAGE_RUNTIME_DEFAULT" -p 'process.version + " " + process.getuid()')" \
  "$(node --version) 65532"

step "pause image"
bash "$IMAGE_DIR/images.sh" pause
c=$(run_check pause --network none --read-only --cap-drop ALL "$IMAGE_PAUSE")
sleep 1
expect_eq "$IMAGE_PAUSE: running after 1 s" "$(dk inspect -f '{{.State.Running}}' "$c")" true
stop_cleanly "$LABEL-pause"
dk rm "$LABEL-pause" >/dev/null

step "control-plane tools (kube-scheduler; test/e2e/build-tools.sh, shared with the e2e tier)"
tools_t0=$SECONDS
bash test/e2e/build-tools.sh
tools_s=$((SECONDS - tools_t0))

step "kube-scheduler image"
bash "$IMAGE_DIR/images.sh" kube-scheduler
expect_eq "$IMAGE_KUBE_SCHEDULER: the chart's command, --version" \
  "$(dk run --rm --label "$LABEL" "${SECURE[@]}" --network none --entrypoint kube-scheduler "$IMAGE_KUBE_SCHEDULER" --version)" \
  "Kubernetes $K8S_VERSION"

step "extender image through the Dockerfile's build arguments (legacy builder)"
bash "$IMAGE_DIR/images.sh" extender

step "extender image as the README builds and pushes it (BuildKit), REGISTRY=$REGISTRY"
# names in a registry of an earlier run on another port
for ref in $(dk image ls --format '{{.Repository}}:{{.Tag}}' | grep -E '^127\.0\.0\.1:[0-9]+/' | grep -v "^$REGISTRY/"); do
  dk rmi "$ref" >/dev/null
done
readme_line=$(grep -m1 '^docker build .*REGISTRY/sandbox-extender:.* && docker push ' README.md) ||
  image_die "README.md has no 'docker build ... REGISTRY/sandbox-extender:... && docker push ...' line"
readme_ref=$(grep -o 'REGISTRY/sandbox-extender:[^ ]*' <<<"$readme_line" | head -1)
expect_eq "README's image tag" "${readme_ref#*:}" "$IMAGE_VERSION"
image_log "README: $readme_line"
# Debian's client first on PATH (a newer client may lack BuildKit's buildx plugin); BuildKit as current clients use it.
build_log readme-build env PATH="$(dirname "$DOCKER_CLI"):$PATH" DOCKER_HOST="unix://$IMAGE_DOCKER_SOCK" DOCKER_BUILDKIT=1 \
  bash -euo pipefail -c "${readme_line//REGISTRY/$REGISTRY}"
PUSHED=$REGISTRY/sandbox-extender:$IMAGE_VERSION

step "the checkout's build (npm run build), for the expected answers"
npm run build --silent

step "run the image built with the build arguments: $IMAGE_EXTENDER"
check_extender "$IMAGE_EXTENDER"
step "run the image the README built: $PUSHED"
check_extender "$PUSHED"

step "registry: pull back by the engine and by containerd"
pushed_id=$(dk image inspect -f '{{.Id}}' "$PUSHED")
digest=$(dk image inspect -f '{{range .RepoDigests}}{{println .}}{{end}}' "$PUSHED" | grep -m1 "^$REGISTRY/sandbox-extender@" | cut -d@ -f2)
[ -n "$digest" ] || image_die "$PUSHED has no digest from $REGISTRY (was it pushed?)"
expect_eq "registry's manifest for $PUSHED" \
  "$(curl -fsS -o /dev/null -w '%{http_code}' -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' "http://$REGISTRY/v2/sandbox-extender/manifests/$digest")" 200
dk rmi "$PUSHED" >/dev/null
dk image inspect "$PUSHED" >/dev/null 2>&1 && image_die "$PUSHED still there after docker rmi"
build_log docker-pull dk pull "$PUSHED"
expect_eq "docker pull $PUSHED: image id" "$(dk image inspect -f '{{.Id}}' "$PUSHED")" "$pushed_id"
# every name that containerd holds the manifest under (earlier runs may have used another registry port)
for ref in $(ctrk -n k8s.io images ls | awk -v d="$digest" '$3 == d {print $1}'); do
  ctrk -n k8s.io images rm --sync "$ref" >/dev/null
done
held=$(ctrk -n k8s.io content ls -q)
grep -qx "$digest" <<<"$held" && image_die "containerd still holds $digest after images rm"
build_log ctr-pull ctrk -n k8s.io images pull --plain-http "$PUSHED"
expect_eq "ctr -n k8s.io images pull $PUSHED: digest" \
  "$(ctrk -n k8s.io images ls | awk -v r="$PUSHED" '$1 == r {print $3}')" "$digest"
bash "$IMAGE_DIR/images.sh" push "$IMAGE_KUBE_SCHEDULER" "$IMAGE_PAUSE" >/dev/null    # for the kubelets of a next tier

step "export (docker save) and import into containerd"
tars=$(bash "$IMAGE_DIR/images.sh" export) || image_die "images.sh export failed"
mapfile -t tars <<<"$tars"
ns=sandbox-extender-import-check
for tar in "${tars[@]}"; do
  ctrk -n "$ns" images import "$tar" >/dev/null || image_die "ctr images import $tar failed"
done
imported=$(ctrk -n "$ns" images ls -q | sort | tr '\n' ' ')
expect_eq "imported by ctr -n $ns images import" "$imported" \
  "$(printf '%s\n' "docker.io/library/$IMAGE_EXTENDER" "$IMAGE_KUBE_SCHEDULER" "$IMAGE_PAUSE" | sort | tr '\n' ' ')"
# shellcheck disable=SC2086  # one argument per image
ctrk -n "$ns" images rm --sync $imported >/dev/null
ctrk namespaces rm "$ns" >/dev/null || true

env_file=$(bash "$IMAGE_DIR/images.sh" env)
dk image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' |
  grep -E "^($IMAGE_EXTENDER|$IMAGE_KUBE_SCHEDULER|$IMAGE_PAUSE|$IMAGE_BUILD_DEFAULT|$IMAGE_RUNTIME_DEFAULT) " |
  while read -r n s; do image_log "size: $n $s"; done
image_log "images: $env_file; control-plane tools step: ${tools_s}s (shared with the e2e tier)"
image_log "image tier: OK"
