#!/usr/bin/env bash
# Regenerates every client's code from proto/. Idempotent: run it after any change to proto/ and
# commit the result; tests/proto/test_generated_code_is_current.py fails when they disagree.
#
# Usage: uv run scripts/generate.sh [--out-root DIR] [--lang LANG]...
#   --out-root DIR  write the tree under DIR instead of the repository (the tests use this);
#                   files land at the same relative paths, e.g. DIR/clients/python/src/hearts/v1.
#   --lang LANG     only this language (python, typescript, go, kotlin, rust); repeatable.
#                   Default: all.
#
# Python is generated here; each other language has its own script (scripts/generate-LANG.sh,
# with the same --out-root option), because each needs its own toolchain (npm, Go, Maven, Cargo).
set -euo pipefail

# shellcheck source=scripts/_proto_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/_proto_env.sh"

OUT_ROOT="${REPO_ROOT}"
LANGS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out-root) OUT_ROOT="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
        --lang) LANGS+=("$2"); shift 2 ;;
        *) echo "usage: $0 [--out-root DIR] [--lang python|typescript|go|kotlin|rust]..." >&2; exit 2 ;;
    esac
done
if [[ ${#LANGS[@]} -eq 0 ]]; then
    LANGS=(python typescript go kotlin rust)
fi

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

# Replaces DEST with the freshly generated SRC, so that files of removed .proto files go away too.
replace_dir() {
    local src="$1" dest="$2"
    rm -rf "${dest}"
    mkdir -p "$(dirname "${dest}")"
    cp -R "${src}" "${dest}"
}

# ---------------------------------------------------------------------------------------------
# Python: messages (*_pb2.py), gRPC stubs (*_pb2_grpc.py) and mypy-protobuf stubs (*.pyi) for the
# package hearts.v1 in the hearts-client distribution.
# ---------------------------------------------------------------------------------------------
generate_python() {
    local out="${WORK_DIR}/python"
    mkdir -p "${out}"

    # mypy-protobuf's plugins, run with the same Python so no PATH lookup can pick another version.
    local plugin_mypy="${WORK_DIR}/protoc-gen-mypy"
    local plugin_mypy_grpc="${WORK_DIR}/protoc-gen-mypy_grpc"
    printf '#!/bin/sh\nexec "%s" -c "import sys; from mypy_protobuf.main import main; sys.exit(main())"\n' \
        "${PYTHON}" >"${plugin_mypy}"
    printf '#!/bin/sh\nexec "%s" -c "import sys; from mypy_protobuf.main import grpc; sys.exit(grpc())"\n' \
        "${PYTHON}" >"${plugin_mypy_grpc}"
    chmod +x "${plugin_mypy}" "${plugin_mypy_grpc}"

    protoc \
        --plugin=protoc-gen-mypy="${plugin_mypy}" \
        --plugin=protoc-gen-mypy_grpc="${plugin_mypy_grpc}" \
        --python_out="${out}" \
        --grpc_python_out="${out}" \
        --mypy_out="${out}" --mypy_opt=quiet \
        --mypy_grpc_out="${out}" --mypy_grpc_opt=quiet \
        "${PROTO_FILES[@]}"

    local docstring='"""Generated Protobuf and gRPC code for hearts.v1; do not edit (scripts/generate.sh)."""'
    printf '%s\n' "${docstring}" >"${out}/hearts/__init__.py"
    printf '%s\n' "${docstring}" >"${out}/hearts/v1/__init__.py"
    # Ship the .pyi stubs to type checkers of installed wheels (PEP 561).
    : >"${out}/hearts/py.typed"

    replace_dir "${out}/hearts" "${OUT_ROOT}/clients/python/src/hearts"
}

for lang in "${LANGS[@]}"; do
    case "${lang}" in
        python)
            generate_python
            echo "generated: clients/python/src/hearts/v1 (under ${OUT_ROOT})"
            ;;
        typescript|go|kotlin|rust)
            bash "${REPO_ROOT}/scripts/generate-${lang}.sh" --out-root "${OUT_ROOT}"
            ;;
        *) echo "unknown language: ${lang}" >&2; exit 2 ;;
    esac
done
