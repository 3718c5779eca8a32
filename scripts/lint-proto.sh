#!/usr/bin/env bash
# Lints proto/ with Buf (rules in buf.yaml: STANDARD plus COMMENTS), checks its formatting, and
# checks that the API is still wire- and source-compatible with the published one (Buf's FILE
# breaking rules against proto/baseline/hearts-v1.binpb).
#
# Usage: uv run scripts/lint-proto.sh                  # lint, format, breaking
#        uv run scripts/lint-proto.sh --update-baseline  # accept the current API as the baseline
#
# Clients generated from an older hearts.v1 must keep working against a newer server, so a change
# that breaks them (a renumbered or retyped field, a removed field whose number is not reserved, a
# renamed RPC) fails here. An addition passes Buf but fails the check that the baseline is current:
# update the baseline with the addition, so that it is protected from then on. Never update it to
# ship a break in hearts.v1; that is hearts.v2.
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
BASELINE="${PROTO_DIR}/baseline/hearts-v1.binpb"

protoc --include_imports --include_source_info --descriptor_set_out="${IMAGE}" "${PROTO_FILES[@]}"

if [[ "${1:-}" == "--update-baseline" ]]; then
    # Without source info, so that only a change of the API itself changes the file.
    mkdir -p "$(dirname "${BASELINE}")"
    protoc --include_imports --descriptor_set_out="${BASELINE}" "${PROTO_FILES[@]}"
    echo "wrote ${BASELINE#"${REPO_ROOT}"/}"
    exit 0
fi

status=0
"${BUF}" lint "${IMAGE}" --config "${REPO_ROOT}/buf.yaml" --path hearts || status=$?
(cd "${REPO_ROOT}" && "${BUF}" format -d --exit-code proto) || status=$?
"${BUF}" breaking "${IMAGE}" --against "${BASELINE}" --config "${REPO_ROOT}/buf.yaml" \
    --path hearts || status=$?
protoc --include_imports --descriptor_set_out="${WORK_DIR}/current.binpb" "${PROTO_FILES[@]}"
# Only our own files: the imported google/* ones change with a grpcio-tools or
# googleapis-common-protos upgrade, which changes nothing of hearts.v1.
own_api() {
    "${PYTHON}" - "$1" <<'PY'
import sys
from google.protobuf import descriptor_pb2
files = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], "rb").read()).file
own = descriptor_pb2.FileDescriptorSet(file=[f for f in files if f.name.startswith("hearts/")])
sys.stdout.write(own.SerializeToString(deterministic=True).hex())
PY
}
if [[ ${status} -eq 0 ]] && [[ "$(own_api "${WORK_DIR}/current.binpb")" != "$(own_api "${BASELINE}")" ]]; then
    echo "proto/baseline/hearts-v1.binpb is not the current API: the change is compatible;" >&2
    echo "record it with 'uv run scripts/lint-proto.sh --update-baseline' and commit the file." >&2
    status=1
fi
if [[ ${status} -eq 0 ]]; then
    echo "buf lint, buf format and buf breaking: clean"
fi
exit "${status}"
