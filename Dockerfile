# syntax=docker/dockerfile:1
# loopguard's image: compiled on Node 24, run on a Node 24 runtime without a shell, as the numeric non-root user
# 65532 (runAsNonRoot can verify it), on a read-only root filesystem.
#
# The bases are build arguments. The defaults are the public images (fully qualified, so that podman needs no
# short-name alias); `npm run image` passes locally built equivalents when no registry can be reached
# (scripts/image/bases.sh). An optional build secret `npm-ca` is a CA bundle npm trusts besides its own (a
# TLS-inspecting proxy on the way to the npm registry); `npm run image` passes the machine's. LOOPGUARD_COMMIT is
# the git commit `loopguard --version` and the start-up log line report:
#   docker build --build-arg LOOPGUARD_COMMIT=$(git rev-parse --short=12 HEAD) -t loopguard:0.1.0 .
# Few steps on purpose: podman's vfs storage (the only one on some machines) copies the whole tree for each layer.
ARG BUILD_IMAGE=docker.io/library/node:24-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian13:nonroot

# Production dependencies and package.json, without what a running operator never reads
# (scripts/image/prune-node-modules.sh). Cached until package*.json or the prune script change.
FROM ${BUILD_IMAGE} AS deps
COPY package.json package-lock.json scripts/image/prune-node-modules.sh /src/
RUN --mount=type=cache,target=/root/.npm,sharing=locked --mount=type=secret,id=npm-ca \
    ca=/run/secrets/npm-ca; if [ -s "$ca" ]; then export NODE_EXTRA_CA_CERTS="$ca"; fi \
 && cd /src \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=warn --no-update-notifier \
 && sh prune-node-modules.sh node_modules \
 && rm prune-node-modules.sh package-lock.json

# The compiled operator in /dist, without source maps (the image has no sources to map to), and the commit in
# /dist/build-info.json. One step that leaves only /dist behind. LOOPGUARD_INPUTS (a hash of the files read
# here, passed by build.sh) keeps builders that do not hash bind-mounted files from reusing a stale result.
FROM ${BUILD_IMAGE} AS build
ARG LOOPGUARD_INPUTS=
ARG LOOPGUARD_COMMIT=unknown
RUN --mount=type=bind,target=/context --mount=type=cache,target=/root/.npm,sharing=locked --mount=type=secret,id=npm-ca \
    ca=/run/secrets/npm-ca; if [ -s "$ca" ]; then export NODE_EXTRA_CA_CERTS="$ca"; fi \
 && mkdir /src && cd /src \
 && cp /context/package.json /context/package-lock.json /context/tsconfig.json /context/tsconfig.build.json . \
 && cp -R /context/src src \
 && npm ci --ignore-scripts --no-audit --no-fund --loglevel=warn --no-update-notifier \
 && node node_modules/typescript/bin/tsc -p tsconfig.build.json --sourceMap false --outDir /dist \
 && printf '{"commit":"%s"}\n' "$LOOPGUARD_COMMIT" > /dist/build-info.json \
 && cd / && rm -rf /src

FROM ${RUNTIME_IMAGE}
COPY --from=deps /src /app
COPY --from=build /dist /app/dist
WORKDIR /app
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "dist/main.js"]
# Last, so that a new commit rebuilds no layer above.
ARG LOOPGUARD_COMMIT=unknown
ARG LOOPGUARD_VERSION=unknown
LABEL org.opencontainers.image.title="loopguard" \
      org.opencontainers.image.description="Kubernetes operator that finds and removes Tencent Cloud CLB loopback faults in TKE clusters" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${LOOPGUARD_VERSION}" \
      org.opencontainers.image.revision="${LOOPGUARD_COMMIT}"
