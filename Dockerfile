# sandbox-extender image: build with the dev dependencies, run on distroless Node 20 with the production
# dependencies only, as a non-root user. The command is `sandbox-extender`, serve by default; health checks are
# Kubernetes probes (/healthz, /readyz), so there is no HEALTHCHECK.
#
#   docker build --network host -t REGISTRY/sandbox-extender:0.1.0 .
#   docker run --rm -p 8888:8888 -v "$PWD/examples:/examples:ro" REGISTRY/sandbox-extender:0.1.0 \
#     serve --snapshot /examples/snapshot.json --host 0.0.0.0
#
# --network host: `npm ci` reaches the npm registry through the host's network, also on an engine without a bridge
# network (the default build network is the bridge). The image tier (test/image/run-ci.sh) builds this file from
# locally made base images, both through the build arguments and as the README writes it, and runs the image as the
# chart does.

ARG BUILD_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

# ---- build: compile TypeScript with the dev dependencies
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm ci --no-audit --no-fund
COPY src ./src
RUN npm run build

# ---- production dependencies only
FROM ${BUILD_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# ---- runtime: no shell, no npm, uid 65532
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
# node is /nodejs/bin/node in the distroless image; on PATH for the chart's metrics gateway container.
ENV PATH=/nodejs/bin:/usr/local/bin:/usr/bin:/bin
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY package.json ./
COPY bin ./bin
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/bin/sandbox-extender.js"]
CMD ["serve"]
