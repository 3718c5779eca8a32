#!/usr/bin/env bash
# CI for the TypeScript client (clients/typescript): a reproducible install from package-lock.json,
# the strict build, a check that src/gen is what scripts/generate-typescript.sh makes from proto/,
# and the conformance test and README example against a fresh hearts-server.
#
# Usage: bash clients/typescript/ci.sh   (needs node >= 20, npm, and uv for protoc and the server)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
CLIENT_DIR="$(pwd)"
REPO_ROOT="$(cd ../.. && pwd)"

log() { printf '\n== typescript client: %s\n' "$*"; }

log "install (npm ci; node $(node --version), npm $(npm --version))"
# The lock file must stay free of registry URLs (.npmrc: omit-lockfile-registry-resolved).
if grep -q '"resolved"' package-lock.json; then
    echo "package-lock.json holds \"resolved\" URLs; reinstall with this directory's .npmrc" >&2
    exit 1
fi
npm ci --no-audit --no-fund

log "build (tsc, strict)"
npm run build

log "generated code is current"
bash "${REPO_ROOT}/scripts/check-generated.sh" typescript clients/typescript/src/gen

log "README example is examples/quickstart.ts"
# The first ```ts block of README.md, without its fences.
if ! diff <(awk '/^```ts$/ && !seen { inside = 1; seen = 1; next } inside && /^```$/ { exit } inside' README.md) \
    examples/quickstart.ts; then
    echo "README.md's example differs from examples/quickstart.ts; copy the file into it" >&2
    exit 1
fi
echo "README example matches"

log "conformance test against a live server"
"${REPO_ROOT}/scripts/with-server.sh" npm --prefix "${CLIENT_DIR}" test

log "README example against a live server"
# shellcheck disable=SC2016 # HEARTS_SERVER is set by with-server.sh, inside the inner shell.
"${REPO_ROOT}/scripts/with-server.sh" bash -c 'node "$1/dist/examples/quickstart.js" "${HEARTS_SERVER}"' _ "${CLIENT_DIR}"
