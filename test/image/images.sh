#!/usr/bin/env bash
# Images made locally, without a registry to pull from, on the engine of test/image/engine.sh (start it first):
#
#   test/image/images.sh base            the base images (below), each kept until its inputs change
#   test/image/images.sh pause           a static pause binary (test/image/pause) in a scratch image
#   test/image/images.sh kube-scheduler  the e2e tier's kube-scheduler binary on the static base
#                                        (build it first: test/e2e/build-tools.sh)
#   test/image/images.sh extender        the Dockerfile through its build arguments (the base images by their
#                                        keyed names; legacy builder, --network host for npm), as sandbox-extender:VERSION
#                                        (the chart's default extender image; VERSION is package.json's)
#   test/image/images.sh push [IMAGE...] each image (default: the extender, kube-scheduler and pause images) pushed to
#                                        the engine's loopback registry as REGISTRY/<last path part>:<tag>
#   test/image/images.sh export [IMAGE...] docker save of each (same default) into $SANDBOX_IMAGE_EXPORT/<last path
#                                        part>.tar, for `ctr -n k8s.io images import`; prints the paths (a tarball is
#                                        written again only when its image changed)
#   test/image/images.sh env             writes $SANDBOX_IMAGE_RUN/images.env (names, pushed names, tarballs) and
#                                        prints its path
#   test/image/images.sh all             base, pause, kube-scheduler, extender, push, export, env
#
# Base images, named as the Dockerfile's build arguments default to (so `docker build .` needs no argument) and,
# to pass them explicitly, sandbox-extender-base/NAME:KEY, KEY a hash of everything the image is made from:
#   sandbox-extender-base/bookworm     debootstrap --variant=minbase bookworm from the mirror apt is configured with,
#                                      imported (`docker import`)
#   node:20-bookworm-slim              = sandbox-extender-base/node-build: that root filesystem with this machine's
#                                      node (20) and npm in /usr/local, and its CA bundle (NODE_EXTRA_CA_CERTS) so
#                                      that npm inside a build reaches the npm registry
#   sandbox-extender-base/static       distroless-like: /etc/passwd and /etc/group with nonroot (65532), a CA bundle,
#                                      /tmp, /home/nonroot, USER 65532; no shell, no package manager
#   gcr.io/distroless/nodejs20-debian12:nonroot = sandbox-extender-base/nodejs-runtime: static + /nodejs/bin/node
#                                      and the shared libraries ldd lists for it, ENTRYPOINT /nodejs/bin/node
# Stale keys of these names are removed when a new key is built.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

dk version >/dev/null 2>&1 || image_die "no engine on $IMAGE_DOCKER_SOCK: run test/image/engine.sh up first"
BASE=sandbox-extender-base
CA_BUNDLE=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$CA_BUNDLE" ] || image_die "no CA bundle at $CA_BUNDLE (set NODE_EXTRA_CA_CERTS to the machine's bundle)"

has_image() { dk image inspect "$1" >/dev/null 2>&1; }

# retag NAME KEY [DEFAULT]: NAME:KEY becomes DEFAULT too; other tags of NAME are removed.
retag() {
  local name=$1 key=$2 default=${3:-} t
  [ -n "$default" ] && dk tag "$name:$key" "$default"
  for t in $(dk image ls "$name" --format '{{.Tag}}'); do
    [ "$t" = "$key" ] || dk rmi "$name:$t" >/dev/null || true
  done
}

# build_image TAG CONTEXT: docker build (legacy builder) of CONTEXT/Dockerfile, quiet unless it fails.
build_image() {
  local out
  out=$(DOCKER_BUILDKIT=0 dk build --network none -t "$1" "$2" 2>&1) || { echo "$out" >&2; image_die "docker build of $1 failed"; }
}

# ------------------------------------------------------------------------------------------------ base images
mirror() {
  local m
  # shellcheck disable=SC2016  # $(...) are apt's own fields
  m=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null |
      awk '$2 == "bookworm" && $3 == "deb" { print $1; exit }')
  [ -n "$m" ] || image_die "no Debian bookworm mirror in apt's sources (apt-get indextargets); run apt-get update"
  echo "$m"
}

node_bin() {
  local n
  n=$(readlink -f "$(command -v node)")
  [ "$("$n" -p 'process.versions.node.split(".")[0]')" = 20 ] || image_die "the images are Node 20; this machine's node is $("$n" --version)"
  echo "$n"
}

npm_dir() { dirname "$(dirname "$(readlink -f "$(command -v npm)")")"; }   # .../node_modules/npm

# The shared libraries node needs (ldd), absolute paths, the dynamic loader included.
node_libs() { ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u; }

make_rootfs() { # TAR MIRROR
  local root
  root=$(mktemp -d "$IMAGE_CACHE/rootfs/.debootstrap.XXXXXX")
  image_log "debootstrap --variant=minbase bookworm from $2 (~40 s)"
  debootstrap --variant=minbase bookworm "$root" "$2" >"$IMAGE_CACHE/rootfs/debootstrap.log" 2>&1 ||
    { tail -n 20 "$IMAGE_CACHE/rootfs/debootstrap.log" >&2; rm -rf "$root"; image_die "debootstrap failed (log above)"; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar --numeric-owner -C "$root" -cf "$1.partial" .
  rm -rf "$root"
  mv -f "$1.partial" "$1"
}

make_node_build() { # TAG BASE-IMAGE NODE NPM-DIR
  local ctx
  ctx=$(mktemp -d)
  cp "$3" "$ctx/node"
  cp -R "$4" "$ctx/npm"
  cp "$CA_BUNDLE" "$ctx/ca-certificates.crt"
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $2
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt NODE_VERSION=$("$3" -p process.versions.node)
CMD ["node"]
DOCKERFILE
  build_image "$1" "$ctx"
  rm -rf "$ctx"
}

make_static() { # TAG
  local ctx
  ctx=$(mktemp -d)
  mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/rootfs/root" "$ctx/home/nonroot"
  chmod 1777 "$ctx/rootfs/tmp"; chmod 700 "$ctx/rootfs/root" "$ctx/home/nonroot"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$ctx/rootfs/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' >"$ctx/rootfs/etc/group"
  echo 'hosts: files dns' >"$ctx/rootfs/etc/nsswitch.conf"
  cp "$CA_BUNDLE" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
  cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
COPY --chown=65532:65532 home/ /home/
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
WORKDIR /home/nonroot
USER 65532:65532
DOCKERFILE
  build_image "$1" "$ctx"
  rm -rf "$ctx"
}

make_runtime() { # TAG STATIC-IMAGE NODE
  local ctx lib
  ctx=$(mktemp -d)
  mkdir -p "$ctx/rootfs/nodejs/bin"
  cp "$3" "$ctx/rootfs/nodejs/bin/node"
  for lib in $(node_libs "$3"); do
    mkdir -p "$ctx/rootfs$(dirname "$lib")"
    cp -L "$lib" "$ctx/rootfs$lib"
  done
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $2
COPY rootfs/ /
ENTRYPOINT ["/nodejs/bin/node"]
DOCKERFILE
  build_image "$1" "$ctx"
  rm -rf "$ctx"
}

base() {
  local t0=$SECONDS node npm m rootfs_key tar node_key static_key runtime_key lib_keys=() lib
  node=$(node_bin); npm=$(npm_dir); m=$(mirror)
  mkdir -p "$IMAGE_CACHE/rootfs"

  rootfs_key=$(image_key "$(declare -f make_rootfs)" "$m" bookworm minbase "$(dpkg-query -W -f='${Version}' debootstrap)" "$(dpkg --print-architecture)")
  tar=$IMAGE_CACHE/rootfs/bookworm-minbase-$rootfs_key.tar
  if has_image "$BASE/bookworm:$rootfs_key"; then image_log "$BASE/bookworm:$rootfs_key: kept"
  else
    if [ -f "$tar" ]; then image_log "root filesystem kept: $tar"
    else
      find "$IMAGE_CACHE/rootfs" -maxdepth 1 -name 'bookworm-minbase-*.tar' -delete
      make_rootfs "$tar" "$m"
    fi
    dk import "$tar" "$BASE/bookworm:$rootfs_key" >/dev/null
    image_log "$BASE/bookworm:$rootfs_key: imported ($(du -h "$tar" | cut -f1))"
  fi
  retag "$BASE/bookworm" "$rootfs_key"

  node_key=$(image_key "$rootfs_key" "$(declare -f make_node_build)" "$node" "$npm/package.json" "$CA_BUNDLE")
  if has_image "$BASE/node-build:$node_key"; then image_log "$BASE/node-build:$node_key: kept"
  else
    make_node_build "$BASE/node-build:$node_key" "$BASE/bookworm:$rootfs_key" "$node" "$npm"
    image_log "$BASE/node-build:$node_key: built (node $("$node" --version), npm $(node -p "require('$npm/package.json').version"))"
  fi
  retag "$BASE/node-build" "$node_key" "$IMAGE_BUILD_DEFAULT"

  static_key=$(image_key "$(declare -f make_static)" "$CA_BUNDLE")
  if has_image "$BASE/static:$static_key"; then image_log "$BASE/static:$static_key: kept"
  else make_static "$BASE/static:$static_key"; image_log "$BASE/static:$static_key: built"; fi
  retag "$BASE/static" "$static_key"

  for lib in $(node_libs "$node"); do lib_keys+=("$lib"); done
  runtime_key=$(image_key "$static_key" "$(declare -f make_runtime)" "$node" "${lib_keys[@]}")
  if has_image "$BASE/nodejs-runtime:$runtime_key"; then image_log "$BASE/nodejs-runtime:$runtime_key: kept"
  else
    make_runtime "$BASE/nodejs-runtime:$runtime_key" "$BASE/static:$static_key" "$node"
    image_log "$BASE/nodejs-runtime:$runtime_key: built (node and ${#lib_keys[@]} libraries)"
  fi
  retag "$BASE/nodejs-runtime" "$runtime_key" "$IMAGE_RUNTIME_DEFAULT"

  # Build arguments for the Dockerfile, for a caller that passes them explicitly.
  {
    echo "BUILD_IMAGE=$BASE/node-build:$node_key"
    echo "RUNTIME_IMAGE=$BASE/nodejs-runtime:$runtime_key"
    echo "STATIC_IMAGE=$BASE/static:$static_key"
  } >"$IMAGE_RUN/base-images.env"
  image_log "base images ready in $((SECONDS - t0))s"
}

static_image() {
  [ -f "$IMAGE_RUN/base-images.env" ] || image_die "no base images yet: run test/image/images.sh base first"
  sed -n 's/^STATIC_IMAGE=//p' "$IMAGE_RUN/base-images.env"
}

# ------------------------------------------------------------------------------------------------ pause
make_pause_image() { # TAG BINARY
  local ctx
  ctx=$(mktemp -d)
  cp "$2" "$ctx/pause"
  printf '%s\n' 'FROM scratch' 'COPY pause /pause' 'USER 65535:65535' 'ENTRYPOINT ["/pause"]' >"$ctx/Dockerfile"
  build_image "$1" "$ctx"
  rm -rf "$ctx"
}

pause() {
  command -v go >/dev/null || image_die "go is not installed (the pause binary is built from test/image/pause)"
  local key bin
  key=$(image_key "$(declare -f make_pause_image)" "$IMAGE_DIR/pause/go.mod" "$IMAGE_DIR/pause/main.go" "$(go env GOVERSION)")
  bin=$IMAGE_CACHE/bin/pause-$key
  if [ ! -x "$bin" ]; then
    mkdir -p "$IMAGE_CACHE/bin"
    (cd "$IMAGE_DIR/pause" && GOCACHE=$E2E_CACHE/go-build GOMODCACHE=$E2E_CACHE/gomod GOTOOLCHAIN=local CGO_ENABLED=0 \
      go build -trimpath -ldflags "-s -w" -o "$bin.tmp" .) || image_die "building the pause binary failed"
    mv -f "$bin.tmp" "$bin"
  fi
  if has_image "$BASE/pause:$key"; then image_log "$BASE/pause:$key: kept"
  else make_pause_image "$BASE/pause:$key" "$bin"; image_log "$BASE/pause:$key: built"; fi
  retag "$BASE/pause" "$key" "$IMAGE_PAUSE"
  image_log "$IMAGE_PAUSE: $(dk image inspect -f '{{.Size}}' "$IMAGE_PAUSE") bytes"
}

# ------------------------------------------------------------------------------------------------ kube-scheduler
make_kube_scheduler_image() { # TAG STATIC-IMAGE BINARY
  local ctx
  ctx=$(mktemp -d)
  cp "$3" "$ctx/kube-scheduler"
  printf '%s\n' "FROM $2" 'COPY kube-scheduler /usr/local/bin/kube-scheduler' >"$ctx/Dockerfile"
  build_image "$1" "$ctx"
  rm -rf "$ctx"
}

kube_scheduler() {
  local bin=$E2E_BIN/kube-scheduler static key chart_tag
  [ -x "$bin" ] || image_die "no kube-scheduler at $bin: build the e2e tools first (test/e2e/build-tools.sh)"
  chart_tag=$(sed -n '/^scheduler:/,/^[a-z]/ s/^    tag: *\([^ #]*\).*/\1/p' "$REPO_ROOT/charts/sandbox-extender/values.yaml" | head -1)
  [ "$chart_tag" = "$K8S_VERSION" ] || image_die "the chart's scheduler.image.tag ($chart_tag) is not the e2e control plane's version ($K8S_VERSION)"
  static=$(static_image)
  key=$(image_key "$(declare -f make_kube_scheduler_image)" "$static" "$bin")
  if has_image "$BASE/kube-scheduler:$key"; then image_log "$BASE/kube-scheduler:$key: kept"
  else make_kube_scheduler_image "$BASE/kube-scheduler:$key" "$static" "$bin"; image_log "$BASE/kube-scheduler:$key: built"; fi
  retag "$BASE/kube-scheduler" "$key" "$IMAGE_KUBE_SCHEDULER"
}

# ------------------------------------------------------------------------------------------------ extender
extender() {
  [ -f "$IMAGE_RUN/base-images.env" ] || image_die "no base images yet: run test/image/images.sh base first"
  local build runtime t0=$SECONDS log=$IMAGE_LOGS/extender-build.log
  build=$(sed -n 's/^BUILD_IMAGE=//p' "$IMAGE_RUN/base-images.env")
  runtime=$(sed -n 's/^RUNTIME_IMAGE=//p' "$IMAGE_RUN/base-images.env")
  mkdir -p "$IMAGE_LOGS"
  DOCKER_BUILDKIT=0 dk build --network host --build-arg "BUILD_IMAGE=$build" --build-arg "RUNTIME_IMAGE=$runtime" \
    -t "$IMAGE_EXTENDER" "$REPO_ROOT" >"$log" 2>&1 ||
    { tail -n 40 "$log" >&2; image_die "docker build of the Dockerfile failed (log above: $log)"; }
  image_log "$IMAGE_EXTENDER: built in $((SECONDS - t0))s from $build and $runtime ($(dk image inspect -f '{{.Size}}' "$IMAGE_EXTENDER") bytes)"
  # The legacy builder's cache is its untagged stage images; keep this build's (every " ---> ID" of its log) and
  # remove the rest, so that a changed source does not pile up stages of earlier builds.
  local keep old n=0
  keep=$(sed -n 's/^ ---> \([0-9a-f]\{12\}\)$/\1/p' "$log" | sort -u)
  for old in $(dk image ls -q --filter dangling=true); do
    grep -qx "$old" <<<"$keep" && continue
    dk rmi "$old" >/dev/null 2>&1 && n=$((n + 1))
  done
  [ "$n" = 0 ] || image_log "removed $n untagged images of earlier builds"
}

DEFAULT_IMAGES=("$IMAGE_EXTENDER" "$IMAGE_KUBE_SCHEDULER" "$IMAGE_PAUSE")
# pushed_name IMAGE: its name in the loopback registry.
pushed_name() { local r; r=$(image_registry); echo "${r:?no registry: run test/image/engine.sh up}/$(basename "${1%:*}"):${1##*:}"; }
export_file() { echo "$IMAGE_EXPORT/$(basename "${1%:*}").tar"; }

push() {
  local img ref
  for img in "$@"; do
    ref=$(pushed_name "$img")
    dk tag "$img" "$ref"
    dk push "$ref" >"$IMAGE_LOGS/push.log" 2>&1 || { cat "$IMAGE_LOGS/push.log" >&2; image_die "docker push $ref failed"; }
    echo "$ref"
  done
}

# ------------------------------------------------------------------------------------------------ export
# export_images IMAGE...: the image ID is kept in a .id file beside each tarball, so an unchanged image is not
# saved again.
export_images() {
  local img file id
  mkdir -p "$IMAGE_EXPORT"
  for img in "$@"; do
    id=$(dk image inspect -f '{{.Id}}' "$img") || image_die "no image $img to export"
    file=$(export_file "$img")
    if [ ! -f "$file" ] || [ "$(cat "$file.id" 2>/dev/null)" != "$id" ]; then
      dk save -o "$file.partial" "$img"
      mv -f "$file.partial" "$file"
      echo "$id" >"$file.id"
    fi
    echo "$file"
  done
}

write_env() {
  local pairs=(EXTENDER "$IMAGE_EXTENDER" KUBE_SCHEDULER "$IMAGE_KUBE_SCHEDULER" PAUSE "$IMAGE_PAUSE") i
  {
    echo "IMAGE_REGISTRY=$(image_registry)"
    for ((i = 0; i < ${#pairs[@]}; i += 2)); do
      echo "${pairs[i]}_IMAGE=${pairs[i + 1]}"
      echo "${pairs[i]}_IMAGE_PUSHED=$(pushed_name "${pairs[i + 1]}")"
      echo "${pairs[i]}_TAR=$(export_file "${pairs[i + 1]}")"
    done
    echo "BUILD_IMAGE_DEFAULT=$IMAGE_BUILD_DEFAULT"
    echo "RUNTIME_IMAGE_DEFAULT=$IMAGE_RUNTIME_DEFAULT"
  } >"$IMAGE_RUN/images.env"
  echo "$IMAGE_RUN/images.env"
}

cmd=${1:-}; [ "$#" -gt 0 ] && shift
case "$cmd" in
  base) base;;
  pause) pause;;
  kube-scheduler) kube_scheduler;;
  extender) extender;;
  push) [ "$#" -gt 0 ] || set -- "${DEFAULT_IMAGES[@]}"; push "$@";;
  export) [ "$#" -gt 0 ] || set -- "${DEFAULT_IMAGES[@]}"; export_images "$@";;
  env) write_env;;
  all) base; pause; kube_scheduler; extender; push "${DEFAULT_IMAGES[@]}" >/dev/null; export_images "${DEFAULT_IMAGES[@]}" >/dev/null; write_env;;
  *) image_die "usage: images.sh base | pause | kube-scheduler | extender | push [IMAGE...] | export [IMAGE...] | env | all";;
esac
