#!/usr/bin/env bash
# Regenerates the TypeScript client's code (clients/typescript/src/gen) from proto/. Idempotent: run
# it after any change to proto/ and commit the result; clients/typescript/ci.sh fails when they
# disagree.
#
# Usage: uv run scripts/generate-typescript.sh [--out-root DIR]
#   --out-root DIR  write the tree under DIR instead of the repository (the staleness check uses
#                   this); files land at the same relative paths, DIR/clients/typescript/src/gen.
#
# protoc comes from the pinned grpcio-tools and protoc-gen-es from clients/typescript's pinned npm
# dependencies (installed with `npm ci` when missing or not the pinned version). Besides hearts/v1
# it generates every google/api and google/rpc file that hearts/v1 imports, plus
# google/rpc/error_details.proto (ErrorInfo, for reading error details). Those .proto files are read
# from the installed googleapis-common-protos package, never copied into the repo. The well-known
# types (google/protobuf/*) are not generated: protoc-gen-es imports them from
# @bufbuild/protobuf/wkt.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLIENT_DIR="${REPO_ROOT}/clients/typescript"

# shellcheck source=scripts/_proto_env.sh
source "${REPO_ROOT}/scripts/_proto_env.sh"

parse_out_root "$@"

# protoc-gen-es must be the version package.json pins; `npm ci` installs exactly the lock file.
PLUGIN="${CLIENT_DIR}/node_modules/.bin/protoc-gen-es"
pinned="$(node -p 'require(process.argv[1]).devDependencies["@bufbuild/protoc-gen-es"]' \
    "${CLIENT_DIR}/package.json")"
installed="$(node -p 'require(process.argv[1]).version' \
    "${CLIENT_DIR}/node_modules/@bufbuild/protoc-gen-es/package.json" 2>/dev/null || true)"
if [[ ! -x "${PLUGIN}" || "${installed}" != "${pinned}" ]]; then
    (cd "${CLIENT_DIR}" && npm ci --no-audit --no-fund --loglevel=error)
fi

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

# Every file protoc-gen-es must emit: ours, and the non-well-known files they (and ErrorInfo) need.
protoc --include_imports --descriptor_set_out="${WORK_DIR}/all.binpb" \
    "${PROTO_FILES[@]}" google/rpc/error_details.proto
mapfile -t GEN_FILES < <("${PYTHON}" - "${WORK_DIR}/all.binpb" <<'EOF'
import sys
from google.protobuf import descriptor_pb2

files = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], "rb").read()).file
for name in sorted(f.name for f in files if not f.name.startswith("google/protobuf/")):
    print(name)
EOF
)

out="${WORK_DIR}/gen"
mkdir -p "${out}"
protoc \
    --plugin=protoc-gen-es="${PLUGIN}" \
    --es_out="${out}" \
    --es_opt=target=ts,import_extension=js \
    "${GEN_FILES[@]}"

dest="${OUT_ROOT}/clients/typescript/src/gen"
rm -rf "${dest}"
mkdir -p "$(dirname "${dest}")"
cp -R "${out}" "${dest}"
echo "generated: clients/typescript/src/gen (under ${OUT_ROOT}): ${GEN_FILES[*]}"
