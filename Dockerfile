# syntax=docker/dockerfile:1
# The service image: every process of the scale-out stack runs it as `node bin/svc.js <command>`
# (infra/compose/docker-compose.yml, infra/k8s/). TypeScript sources run through tsx, a runtime
# dependency; only the console's web app is built (its own stage).
#
#   docker build -t svc:local .
#   docker run --rm -p 8080:8080 -e NODE_OPTIONS=--max-semi-space-size=64 svc:local
#                                                     # all-in-one on the embedded PostgreSQL, like `npm start`
#   docker run --rm -e DATABASE_URL=… -e SVC_MASTER_KEY=… svc:local run api
#
# NODE_OPTIONS is given per process, not here: only the processes that run detection take it
# (pipelines/detect/node-options.ts); compose and Kubernetes set it on their detect processes.

FROM node:20.19-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The analysts' console web app is built with the dev dependencies (vite) in a stage of its own;
# the image carries only its output.
FROM node:20.19-bookworm-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run console:build

FROM node:20.19-bookworm-slim
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
COPY --from=console /app/console/web/dist ./console/web/dist
# Listen on every interface inside the container; the data directory is used only by the embedded
# PostgreSQL of `svc up` without DATABASE_URL, and must belong to the unprivileged user.
ENV HOST=0.0.0.0 \
    PORT=8080 \
    SVC_DATA_DIR=/var/lib/svc
RUN mkdir -p /var/lib/svc && chown node:node /var/lib/svc
USER node
EXPOSE 8080
ENTRYPOINT ["node", "bin/svc.js"]
CMD ["up"]
