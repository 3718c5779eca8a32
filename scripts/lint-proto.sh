#!/usr/bin/env bash
# Lints proto/ with Buf (rules in buf.yaml: STANDARD plus COMMENTS) and checks its formatting.
#
# Usage: uv run scripts/lint-proto.sh
#
# Buf runs offline: protoc builds a descriptor set (with source info, so the comment rules can
# see comments, and with imports, so Buf needs no dependency download), and Buf lints only our
# own files in it. The Buf CLI is pinned in tools/buf/package.json and installed with npm.
set -euo pipefail

# shellcheck source=scripts/_proto_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/_proto_env.sh"

BUF="${REPO_ROOT}/tools/buf/node_modules/.bin/buf"
if [[ ! -x "${BUF}" ]]; then
    # No lock file is kept: the exact version pin in package.json is the lock.
    (cd "${REPO_ROOT}/tools/buf" && npm install --no-package-lock --no-audit --no-fund --loglevel=error)
fi

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT
IMAGE="${WORK_DIR}/hearts.binpb"

protoc --include_imports --include_source_info --descriptor_set_out="${IMAGE}" "${PROTO_FILES[@]}"

status=0
"${BUF}" lint "${IMAGE}" --config "${REPO_ROOT}/buf.yaml" --path hearts || status=$?
(cd "${REPO_ROOT}" && "${BUF}" format -d --exit-code proto) || status=$?
if [[ ${status} -eq 0 ]]; then
    echo "buf lint and buf format: clean"
fi
exit "${status}"
