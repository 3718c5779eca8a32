#!/usr/bin/env bash
# Regenerates the Go client's code (clients/go/hearts/v1) from proto/. Idempotent: run it after any
# change to proto/ and commit the result; clients/go/ci.sh fails when the two disagree.
#
# Usage: uv run scripts/generate-go.sh [--out-root DIR]
#   --out-root DIR  write the tree under DIR instead of the repository (for the staleness check);
#                   files land at the same relative paths, i.e. DIR/clients/go/hearts/v1.
#
# protoc is the one from grpcio-tools (scripts/_proto_env.sh), as for Python. The plugins
# protoc-gen-go and protoc-gen-go-grpc are the versions pinned by the `tool` directives in
# clients/go/go.mod; they are built from the module cache into a temporary directory, so nothing
# on PATH can stand in for them. The .proto files have no go_package option: the import path is
# given to the plugins here (M options), which keeps Go out of the API definition.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=scripts/_proto_env.sh
source "${SCRIPT_DIR}/_proto_env.sh"

# The Go module of the client, and the Go package every hearts/v1 file is generated into.
GO_MODULE_DIR="${REPO_ROOT}/clients/go"
GO_MODULE="github.com/hearts-dev/hearts/clients/go"
GO_PACKAGE="${GO_MODULE}/hearts/v1;heartsv1"

parse_out_root "$@"

if ! command -v go >/dev/null 2>&1; then
    echo "error: go is not on PATH; the Go client needs Go $(sed -n 's/^go //p' "${GO_MODULE_DIR}/go.mod") or newer." >&2
    exit 1
fi

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

# The pinned plugins: `go build` inside the module resolves them through go.mod and go.sum.
(cd "${GO_MODULE_DIR}" && go build -o "${WORK_DIR}/bin/" \
    google.golang.org/protobuf/cmd/protoc-gen-go \
    google.golang.org/grpc/cmd/protoc-gen-go-grpc)

mapping=()
for file in "${PROTO_FILES[@]}"; do
    mapping+=("--go_opt=M${file}=${GO_PACKAGE}" "--go-grpc_opt=M${file}=${GO_PACKAGE}")
done

out="${WORK_DIR}/go"
mkdir -p "${out}"
protoc \
    --plugin=protoc-gen-go="${WORK_DIR}/bin/protoc-gen-go" \
    --plugin=protoc-gen-go-grpc="${WORK_DIR}/bin/protoc-gen-go-grpc" \
    --go_out="${out}" --go_opt=module="${GO_MODULE}" \
    --go-grpc_out="${out}" --go-grpc_opt=module="${GO_MODULE}" \
    "${mapping[@]}" \
    "${PROTO_FILES[@]}"

# Replace the whole package directory, so that the files of removed .proto files go away too.
dest="${OUT_ROOT}/clients/go/hearts/v1"
rm -rf "${dest}"
mkdir -p "$(dirname "${dest}")"
cp -R "${out}/hearts/v1" "${dest}"
echo "generated: clients/go/hearts/v1 (under ${OUT_ROOT})"
