#!/usr/bin/env bash
# The Dockerfile check without a container engine (see scripts/check-dockerfile.mjs): runs every stage's COPY and
# RUN steps in a clean folder, then starts the image's ENTRYPOINT (serve, snapshot mode) and checks /healthz,
# /readyz, /filter and /metrics. Needs Node 20 and the npm registry (or a warm npm cache). ~1-2 min.
set -euo pipefail
exec node "$(dirname "$0")/check-dockerfile.mjs" "$@"
