# shellcheck shell=bash disable=SC2034  # the variables are read by the scripts that source this file
# Shared settings of the image tier (sourced, not run). Paths come from the e2e tier's lib.sh (the repository root,
# $SANDBOX_E2E_CACHE / $XDG_CACHE_HOME / $HOME) and from the variables below; nothing machine-specific is written here.
#
#   SANDBOX_IMAGE_CACHE (default $SANDBOX_E2E_CACHE/image)   kept between runs (what makes a second run fast):
#     rootfs/bookworm-minbase-KEY.tar      the debootstrap root filesystem, keyed by mirror, suite and recipe
#     docker/                              dockerd's data root (base images, build cache, built images)
#     containerd/                          the engine's containerd root (images pulled with ctr)
#     registry/                            the loopback registry's storage
#     bin/pause-KEY                        the static pause binary
#   SANDBOX_IMAGE_RUN (default $SANDBOX_IMAGE_CACHE/run)   a running engine: sockets, pid files, logs,
#     the registry's config, image.env (the addresses; see test/image/README.md)
#   SANDBOX_IMAGE_EXPORT (default $SANDBOX_IMAGE_CACHE/export)   docker save tarballs for another containerd

IMAGE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../e2e/lib.sh
. "$IMAGE_DIR/../e2e/lib.sh"

IMAGE_CACHE=${SANDBOX_IMAGE_CACHE:-$E2E_CACHE/image}
IMAGE_RUN=${SANDBOX_IMAGE_RUN:-$IMAGE_CACHE/run}
IMAGE_EXPORT=${SANDBOX_IMAGE_EXPORT:-$IMAGE_CACHE/export}
IMAGE_LOGS=$IMAGE_RUN/logs
IMAGE_PIDS=$IMAGE_RUN/pids
IMAGE_ENV_FILE=$IMAGE_RUN/image.env

# The engine's endpoints (its own sockets: it never touches a system docker or containerd).
IMAGE_DOCKER_SOCK=$IMAGE_RUN/docker.sock
IMAGE_CONTAINERD_SOCK=$IMAGE_RUN/containerd.sock
# Debian's client (docker.io): a newer client earlier on PATH may lack the legacy builder or speak a newer API.
DOCKER_CLI=/usr/bin/docker
CTR_CLI=/usr/bin/ctr

# Names the Dockerfile's build arguments default to, and the chart's default kube-scheduler image: the tier gives
# these names to its locally made images so that the commands users run work unchanged (nothing is pulled).
IMAGE_BUILD_DEFAULT=node:20-bookworm-slim
IMAGE_RUNTIME_DEFAULT=gcr.io/distroless/nodejs20-debian12:nonroot
# The chart's kube-scheduler image (charts/sandbox-extender/values.yaml scheduler.image), built from the e2e tier's
# kube-scheduler binary of version $K8S_VERSION.
IMAGE_KUBE_SCHEDULER=registry.k8s.io/kube-scheduler:$K8S_VERSION
# A static pause binary in a scratch image: a node's containerd sandbox_image.
IMAGE_PAUSE=registry.k8s.io/pause:3.10.1
# The extender: REPO/NAME:VERSION as the README builds it; locally without a registry prefix.
IMAGE_VERSION=$(node -p 'require(process.argv[1]).version' "$REPO_ROOT/package.json")
IMAGE_EXTENDER=sandbox-extender:$IMAGE_VERSION

image_log() { printf '[image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
image_die() { printf '[image %s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# Debian's docker client against the tier's engine.
dk() { DOCKER_HOST=unix://$IMAGE_DOCKER_SOCK "$DOCKER_CLI" "$@"; }
# ctr against the engine's containerd.
ctrk() { "$CTR_CLI" --address "$IMAGE_CONTAINERD_SOCK" "$@"; }

# image_key FILE-OR-STRING...: a short hash of the arguments (files by content, other words as they are).
image_key() {
  local a
  for a in "$@"; do
    if [ -f "$a" ]; then sha256sum <"$a"; else printf '%s\n' "$a"; fi
  done | sha256sum | cut -c1-12
}

# image_registry: the loopback registry's HOST:PORT (empty when the engine has not been started).
image_registry() {
  [ -f "$IMAGE_ENV_FILE" ] || return 0
  sed -n 's/^IMAGE_REGISTRY=//p' "$IMAGE_ENV_FILE"
}
