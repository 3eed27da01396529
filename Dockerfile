# syntax=docker/dockerfile:1
# Switchyard worker image. Three stages:
#   prod-deps  production dependencies only, with the toolchain sqlite3's native module may need
#   build      every dependency (TypeScript) and the compiled dist/, less the emulator and the bench
#   runtime    node:20-slim, no toolchain, no devDependencies, runs as the unprivileged `node` user
# Build:  docker build -t switchyard .
# Run:    docker run -p 3000:3000 -v switchyard-data:/app/data --env-file switchyard.env switchyard

FROM node:20-slim AS prod-deps
WORKDIR /app
# sqlite3 downloads a prebuilt binary when one matches; otherwise node-gyp compiles it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run tsc, a devDependency that is not installed here;
# the one install script we need (sqlite3's native module) is run explicitly.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild sqlite3 \
 && node -e "require('sqlite3')" \
 && npm cache clean --force

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# tsc needs no native module, so no scripts (and no toolchain) here either.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY plugins ./plugins
# The emulator and the bench serve `switchyard demo|bench|emulate` in development checkouts; the
# image leaves them out, and those commands say so (src/cli/main.ts). Nothing else imports them.
RUN npm run build \
 && rm -rf dist/src/emulator dist/src/bench

FROM node:20-slim AS runtime
# glibc keeps freed memory of its arenas unless told a fixed trim threshold: with one, the burst's
# peak RSS fell by 25-50 MB at the same throughput (issue 16, docs/performance.md). npm start sets it too.
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/app/data \
    MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY package.json package-lock.json manifest.template.json ./
COPY bin ./bin
COPY pipelines ./pipelines
# The app's logo and the default step logo the manifest names.
COPY assets ./assets
COPY --from=build /app/dist ./dist
# The embedded SQLite store and the generated token key live in DATA_DIR: mount a volume there.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node is PID 1: it receives SIGTERM from `docker stop` and drains (SHUTDOWN_TIMEOUT_MS).
# A heap limit: without one V8 sizes the heap from the host's memory and lets it grow under load
# (a flood peaked at 440 MB); with it the same flood stays near 220 MB (docs/performance.md).
CMD ["node", "--max-old-space-size=512", "--max-semi-space-size=8", "bin/switchyard.js", "serve"]
