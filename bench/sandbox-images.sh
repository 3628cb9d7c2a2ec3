#!/usr/bin/env bash
# The sandbox images of `npm run bench -- time-to-ready` (bench/timeToReady.ts), built on the image tier's engine and
# pushed to its loopback registry (test/image/engine.sh up and test/image/images.sh pause first):
#
#   bench/sandbox-images.sh SIZE_MIB...     one template per size: prints "REF SIZE_BYTES" per template, REF its
#                                           name in the registry (REGISTRY/sandbox-bench/tmpl-K:KEY)
#
# Template K is the pause image (its static binary is the command: it runs until SIGTERM) plus LAYERS layers of
# random bytes (/dev/urandom: nothing a registry or a pull can compress away), SIZE_MIB in all, each template its
# own bytes. KEY is a hash of the recipe, K, the size and the pause image's ID: an image of that key already in the
# engine is not built again, nor pushed again when the registry already holds its manifest. Other keys of
# sandbox-bench/tmpl-K are removed from the engine.
set -euo pipefail
. "$(dirname "$0")/../test/image/lib.sh"

LAYERS=${SANDBOX_BENCH_LAYERS:-2}
[ $# -gt 0 ] || image_die "usage: bench/sandbox-images.sh SIZE_MIB..."
dk version >/dev/null 2>&1 || image_die "no engine on $IMAGE_DOCKER_SOCK: run test/image/engine.sh up first"
REG=$(image_registry)
[ -n "$REG" ] || image_die "no registry: run test/image/engine.sh up first"
PAUSE_ID=$(dk image inspect -f '{{.Id}}' "$IMAGE_PAUSE" 2>/dev/null) || image_die "no $IMAGE_PAUSE: run test/image/images.sh pause first"

make_sandbox_image() { # TAG SIZE_MIB
  local ctx l per
  ctx=$(mktemp -d "$IMAGE_CACHE/.sandbox-bench.XXXXXX")
  per=$(( $2 * 1024 * 1024 / LAYERS ))
  { echo "FROM $IMAGE_PAUSE"
    for ((l = 0; l < LAYERS; l++)); do
      head -c "$per" /dev/urandom >"$ctx/layer-$l"
      echo "COPY layer-$l /data/layer-$l"
    done
  } >"$ctx/Dockerfile"
  local out
  out=$(DOCKER_BUILDKIT=0 dk build --network none -t "$1" "$ctx" 2>&1) || { rm -rf "$ctx"; echo "$out" >&2; image_die "docker build of $1 failed"; }
  rm -rf "$ctx"
}

k=0
for size in "$@"; do
  [[ $size =~ ^[1-9][0-9]{0,4}$ ]] || image_die "a size is a number of MiB (1-99999), not '$size'"
  name=sandbox-bench/tmpl-$k
  key=$(image_key "$(declare -f make_sandbox_image)" "$k" "$size" "$LAYERS" "$PAUSE_ID")
  if dk image inspect "$name:$key" >/dev/null 2>&1; then image_log "$name:$key ($size MiB): kept"
  else
    t0=$SECONDS
    make_sandbox_image "$name:$key" "$size"
    image_log "$name:$key ($size MiB in $LAYERS layers of random bytes): built in $((SECONDS - t0))s"
  fi
  for t in $(dk image ls "$name" --format '{{.Tag}}'); do [ "$t" = "$key" ] || dk rmi "$name:$t" >/dev/null || true; done
  ref=$REG/$name:$key
  if curl -fs -o /dev/null -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' "http://$REG/v2/$name/manifests/$key"; then
    image_log "$ref: in the registry"
  else
    t0=$SECONDS
    dk tag "$name:$key" "$ref"
    dk push "$ref" >"$IMAGE_LOGS/push-sandbox-bench.log" 2>&1 || { cat "$IMAGE_LOGS/push-sandbox-bench.log" >&2; image_die "docker push $ref failed"; }
    dk rmi "$ref" >/dev/null
    image_log "$ref: pushed in $((SECONDS - t0))s"
  fi
  echo "$ref $(dk image inspect -f '{{.Size}}' "$name:$key")"
  k=$((k + 1))
done
