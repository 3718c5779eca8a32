#!/usr/bin/env bash
# CI for the Go client: the committed generated code is what proto/ makes now, go.mod is tidy,
# the code is formatted and vetted, the README's example compiles, and the conformance test passes
# against a live hearts-server (started by scripts/with-server.sh).
#
# Usage: bash clients/go/ci.sh   (from anywhere; needs go and uv on PATH)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

log() { printf '\n== go client: %s\n' "$*"; }

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

go version

log "generated code is current"
bash ../../scripts/check-generated.sh go clients/go/hearts/v1

log "go.mod and go.sum are tidy"
go mod tidy -diff

log "gofmt"
unformatted="$(gofmt -l .)"
if [[ -n "${unformatted}" ]]; then
    echo "not gofmt-formatted:" >&2
    echo "${unformatted}" >&2
    exit 1
fi

log "go vet"
go vet ./...

log "the README example compiles"
mkdir -p "${WORK_DIR}/example"
awk '/^```go$/ { inside = 1; next } /^```$/ { inside = 0 } inside' README.md >"${WORK_DIR}/example/main.go"
go vet "${WORK_DIR}/example/main.go"
go build -o /dev/null "${WORK_DIR}/example/main.go"

log "conformance test against a live server"
../../scripts/with-server.sh go -C clients/go test ./... -count=1 -v
