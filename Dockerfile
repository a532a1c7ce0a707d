# syntax=docker/dockerfile:1
# loopguard's image: bundled on Node 24, run on a Node 24 runtime without a shell, as the numeric non-root user
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

# Every dependency the build needs (esbuild, tsx and the production ones it bundles): npm ci installs the lockfile's
# dev dependencies too (in this stage only; none reaches the image), with no install scripts. Cached until
# package*.json changes; build.sh tags this stage so that its clean-up keeps it.
FROM ${BUILD_IMAGE} AS deps
COPY package.json package-lock.json /src/
RUN --mount=type=cache,target=/root/.npm,sharing=locked --mount=type=secret,id=npm-ca \
    ca=/run/secrets/npm-ca; if [ -s "$ca" ]; then export NODE_EXTRA_CA_CERTS="$ca"; fi \
 && cd /src \
 && npm ci --ignore-scripts --no-audit --no-fund --loglevel=warn --no-update-notifier

# The operator as one file, /out/loopguard.cjs, its LICENSE and the licenses of what it bundles (scripts/build-operator.ts:
# esbuild, the commit baked in). No node_modules in the image: the bundle holds what the operator reaches, and Node
# loading it takes about 50 MiB less at start than loading node_modules, its heap ~22 MiB less under load (README Benchmarks). LOOPGUARD_INPUTS (a hash of the
# files read here, passed by build.sh) keeps builders that do not hash bind-mounted files from reusing a stale result.
FROM deps AS build
ARG LOOPGUARD_INPUTS=
ARG LOOPGUARD_COMMIT=unknown
RUN --mount=type=bind,target=/context \
    cd /src \
 && cp /context/tsconfig.json /context/LICENSE . && cp -R /context/src src \
 && mkdir -p scripts/lib && cp /context/scripts/build-operator.ts scripts/ && cp /context/scripts/lib/bundle.ts scripts/lib/ \
 && node --import tsx scripts/build-operator.ts --outdir /out --commit "$LOOPGUARD_COMMIT"

FROM ${RUNTIME_IMAGE}
COPY --from=build /out /app
WORKDIR /app
USER 65532:65532
# The flags: scripts/lib/bundle.ts, BUNDLE_NODE_OPTIONS.
ENTRYPOINT ["/nodejs/bin/node", "--disable-warning=DEP0040", "--disable-warning=DEP0169", "loopguard.cjs"]
# Last, so that a new commit rebuilds no layer above.
ARG LOOPGUARD_COMMIT=unknown
ARG LOOPGUARD_VERSION=unknown
LABEL org.opencontainers.image.title="loopguard" \
      org.opencontainers.image.description="Kubernetes operator that finds and removes Tencent Cloud CLB loopback faults in TKE clusters" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${LOOPGUARD_VERSION}" \
      org.opencontainers.image.revision="${LOOPGUARD_COMMIT}"
