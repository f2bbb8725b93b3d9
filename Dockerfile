# One image for every process of the service; the command picks the process (README "Deploying"):
#   node services/gateway/src/main.ts     HTTP gateway on PORT (8080): API, /healthz, /readyz, /metrics
#   node services/projector/src/main.ts   projector + outbox relay + daily scheduler + pruner; /healthz,
#                                         /readyz, /metrics on PROJECTOR_METRICS_PORT (9091)
#   node scripts/migrate.ts               create the database if missing, apply migrations (a Job)
# Node 24 runs the TypeScript sources as they are (type stripping), so there is no compile step.
#
# Why `pnpm install --prod` over the workspace and not `pnpm deploy`: pnpm deploy copies the workspace
# packages (@ingest/*) into node_modules/.pnpm/, and Node refuses to strip types from any file under
# node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING); contracts and db also find schemas/ and
# migrations/ three directories above their sources. A workspace install links @ingest/* to
# packages/* and services/*, which keeps both working. Dev dependencies are not installed.

ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS deps
# The pnpm that package.json's packageManager names, from the npm registry.
RUN npm install --global --no-audit --no-fund pnpm@10.34.9
ENV CI=true
WORKDIR /app
# Packages are fetched from the lockfile alone: this layer is reused until pnpm-lock.yaml changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch --prod --store-dir /pnpm/store
# .dockerignore lets in only manifests, sources, schemas/, migrations/ and scripts/migrate.ts.
COPY . .
RUN pnpm install --prod --frozen-lockfile --offline --store-dir /pnpm/store

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    KAFKAJS_NO_PARTITIONER_WARNING=1
WORKDIR /app
# Owned by root and read-only to the process; nothing is written inside the image at run time.
COPY --from=deps /app /app
# The image's `node` user, numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 9091
# No HEALTHCHECK: the two processes answer on different ports; compose and Kubernetes probe each.
CMD ["node", "services/gateway/src/main.ts"]
