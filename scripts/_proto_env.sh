# Shared set-up for scripts/generate.sh and scripts/lint-proto.sh; source it, do not run it.
#
# It finds the Python that has grpcio-tools, mypy-protobuf and googleapis-common-protos (the root
# pyproject's dev group), and the include paths protoc needs. The google/api and google/rpc .proto
# files are read from the installed googleapis-common-protos package, never copied into the repo.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROTO_DIR="${REPO_ROOT}/proto"
# Under `uv run` the workspace venv comes first on PATH; set PYTHON to use another interpreter.
PYTHON="${PYTHON:-python3}"

if ! "${PYTHON}" -c 'import grpc_tools.protoc, mypy_protobuf, google.api.annotations_pb2' 2>/dev/null; then
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
