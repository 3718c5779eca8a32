#!/usr/bin/env bash
# CI for hearts-gateway (deploy/gateway): go.mod and go.sum are complete, the code is formatted, vetted and builds,
# the Go tests pass (unit tests, then REST, CORS, health and shutdown against a live gateway in
# front of a live server), the Go client's conformance game passes through the gateway over
# plain gRPC, and the TypeScript one over gRPC-Web and Connect, from Node and from a page in
# headless Chromium on another origin (CORS). with-gateway.sh starts a server and a gateway on
# free loopback ports for each step and stops them.
#
# Usage: bash deploy/gateway/ci.sh   (from anywhere; needs go, node >= 20 with npm, and uv;
# installs Debian's chromium with apt-get when /usr/bin/chromium is missing, which needs root)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
REPO_ROOT="$(cd ../.. && pwd)"

log() { printf '\n== gateway: %s\n' "$*"; }

go version

log "go.mod and go.sum are complete"
# Not 'go mod tidy -diff': tidy would add the hashes of modules that only vanguard's own tests use
# (never built here), whose paths name another registry's host. Read-only mode makes every go
# command below fail instead if go.mod or go.sum lacks anything the build and tests need.
export GOFLAGS=-mod=readonly
go mod verify

log "gofmt"
unformatted="$(gofmt -l .)"
if [[ -n "${unformatted}" ]]; then
    echo "not gofmt-formatted:" >&2
    echo "${unformatted}" >&2
    exit 1
fi

log "go vet, build"
go vet ./...
go build -o /dev/null .

log "Go tests against a live gateway and server"
./with-gateway.sh go -C deploy/gateway test ./... -count=1 -v

log "Go conformance over plain gRPC, through the gateway (h2c)"
# shellcheck disable=SC2016 # HEARTS_GATEWAY is set by with-gateway.sh, inside the inner shell.
./with-gateway.sh bash -c 'HEARTS_SERVER="${HEARTS_GATEWAY}" go -C clients/go test ./conformance -count=1 -v'

log "TypeScript conformance over gRPC-Web and Connect, through the gateway"
# The TypeScript client's own CI (clients/typescript/ci.sh) installs with npm ci; install here
# only if that has not happened, so that this script also runs on its own.
if [[ ! -d "${REPO_ROOT}/clients/typescript/node_modules/@connectrpc/connect-web" ||
    ! -d "${REPO_ROOT}/clients/typescript/node_modules/playwright-core" ]]; then
    (cd "${REPO_ROOT}/clients/typescript" && npm ci --no-audit --no-fund)
fi
./with-gateway.sh npm --prefix "${REPO_ROOT}/clients/typescript" run test:web

log "TypeScript client in headless Chromium, from a page on another origin"
# Debian's Chromium, driven by playwright-core (never Playwright's own browser download).
if [[ ! -x /usr/bin/chromium ]]; then
    export DEBIAN_FRONTEND=noninteractive
    started=${SECONDS}
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
    echo "installed $(/usr/bin/chromium --version 2>/dev/null) in $((SECONDS - started)) s"
fi
./with-gateway.sh npm --prefix "${REPO_ROOT}/clients/typescript" run test:browser
