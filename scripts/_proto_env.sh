# Shared set-up for scripts/generate*.sh and scripts/lint-proto.sh; source it, do not run it.
#
# It finds the Python that has grpcio-tools, mypy-protobuf and googleapis-common-protos (the root
# pyproject's dev group), and the include paths protoc needs. The google/api and google/rpc .proto
# files are read from the installed googleapis-common-protos package, never copied into the repo.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROTO_DIR="${REPO_ROOT}/proto"
# Under `uv run` the workspace venv comes first on PATH; set PYTHON to use another interpreter.
PYTHON="${PYTHON:-python3}"

if ! "${PYTHON}" -c 'import grpc_tools.protoc, mypy_protobuf, google.api.annotations_pb2' 2>/dev/null; then
    # A script called without `uv run` (a client's ci.sh calls its generator directly) runs
    # again under uv, once, with its arguments, so the pinned versions are the ones used.
    if [[ -z "${HEARTS_PROTO_ENV_REEXEC:-}" ]] && command -v uv >/dev/null 2>&1; then
        export HEARTS_PROTO_ENV_REEXEC=1
        exec uv run --quiet --project "${REPO_ROOT}" bash "${BASH_SOURCE[1]}" "$@"
    fi
    echo "error: ${PYTHON} lacks grpcio-tools, mypy-protobuf or googleapis-common-protos;" >&2
    echo "       run 'uv sync --all-packages' and call this script with 'uv run', or set PYTHON." >&2
    exit 1
fi

# googleapis-common-protos installs google/api/*.proto beside its *_pb2.py files.
GOOGLEAPIS_INCLUDE="$("${PYTHON}" -c 'import os, google.api.annotations_pb2 as m; print(os.path.dirname(os.path.dirname(os.path.dirname(m.__file__))))')"
# grpcio-tools bundles the well-known types (google/protobuf/*.proto).
WKT_INCLUDE="$("${PYTHON}" -c 'import os, grpc_tools; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"

# Sorted so that protoc sees the files in the same order on every machine.
mapfile -t PROTO_FILES < <(cd "${PROTO_DIR}" && find hearts -name '*.proto' | LC_ALL=C sort)

protoc() {
    "${PYTHON}" -m grpc_tools.protoc \
        --proto_path="${PROTO_DIR}" \
        --proto_path="${GOOGLEAPIS_INCLUDE}" \
        --proto_path="${WKT_INCLUDE}" \
        "$@"
}

# The --out-root DIR option of the per-language generators (scripts/generate-LANG.sh): OUT_ROOT is
# the tree to write under, the repository by default. Call it with the script's arguments.
parse_out_root() {
    OUT_ROOT="${REPO_ROOT}"
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --out-root) OUT_ROOT="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
            *) echo "usage: ${BASH_SOURCE[1]} [--out-root DIR]" >&2; exit 2 ;;
        esac
    done
}
