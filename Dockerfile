# One image for every process of the service; the command picks the process (docs/deploying.md):
#   node services/gateway/src/main.ts          HTTP gateway on PORT (8080): API, /healthz, /readyz;
#                                              /metrics on METRICS_PORT (9090 in deploy/k8s) or on PORT
#   node services/projector/src/main.ts        projector + outbox relay + daily scheduler + pruner;
#                                              /healthz, /readyz, /metrics on PROJECTOR_METRICS_PORT (9091)
#   node services/operator/src/cli/<tool>.ts   the operator's tools: migrate, topics (--plan, --check,
#                                              --apply), parked, partitions, replay, verify (the setup Job runs the
#                                              first two)
# Node 24 runs the TypeScript sources as they are (type stripping), so there is no compile step.
#
# Only those three services, the workspace packages they depend on and their production dependencies
# are installed (pnpm's --filter '<package>...'): the dev stack (packages/devstack, testcontainers) and
# the tests are not even sent to the builder (.dockerignore), and no dev dependency is installed.
#
# Why a workspace install and not `pnpm deploy`: pnpm deploy copies the workspace
# packages (@ingest/*) into node_modules/.pnpm/, and Node refuses to strip types from any file under
# node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING); contracts and db also find schemas/ and
# migrations/ three directories above their sources. A workspace install links @ingest/* to
# packages/* and services/*, which keeps both working.
#
# NODE_IMAGE: any image with Node 24 and npm laid out as the official one; `npm run image` builds
# with a base of its own made from Debian packages and the npm registry (scripts/image/base.ts).

ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS deps
# The pnpm that package.json's packageManager names, from the npm registry.
RUN npm install --global --no-audit --no-fund pnpm@10.34.9
ENV CI=true
# Packages are fetched into the store from the lockfile alone: this layer is reused until
# pnpm-lock.yaml changes. It fetches for every workspace package (the dev stack's too), so it runs
# outside /app: what /app links to is only what the filtered install below takes from the store.
WORKDIR /prefetch
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch --prod --store-dir /pnpm/store
WORKDIR /app
# .dockerignore lets in only manifests, the packages' sources, schemas/ and migrations/.
COPY . .
RUN pnpm install --prod --frozen-lockfile --offline --store-dir /pnpm/store \
      --filter '@ingest/gateway...' --filter '@ingest/projector...' --filter '@ingest/operator...'

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    KAFKAJS_NO_PARTITIONER_WARNING=1
WORKDIR /app
# Owned by root and read-only to the process; nothing is written inside the image at run time.
COPY --from=deps /app /app
# The image's `node` user, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 9090 9091
# No HEALTHCHECK: the two processes answer on different ports; compose and Kubernetes probe each.
# A young generation of fixed size (docs/operations.md#memory): V8 otherwise sizes it from the memory
# it sees and grows it under load, a step in RSS minutes into the run. Node refuses the minimum in
# NODE_OPTIONS, so the flags are on the command line here and in the manifests' commands.
CMD ["node", "--min-semi-space-size=64", "--max-semi-space-size=64", "services/gateway/src/main.ts"]
