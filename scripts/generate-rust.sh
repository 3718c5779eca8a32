#!/usr/bin/env bash
# Regenerates the Rust client's code (clients/rust/src/gen) from proto/. Idempotent: run it after
# any change to proto/ and commit the result; clients/rust/ci.sh fails when the two disagree.
#
# Usage: uv run scripts/generate-rust.sh [--out-root DIR]
#   --out-root DIR  write the tree under DIR instead of the repository (for the staleness check);
#                   files land at the same relative paths, i.e. DIR/clients/rust/src/gen.
#
# protoc is the one from grpcio-tools (scripts/_proto_env.sh), as for Python and Go; here it only
# parses the .proto files into a FileDescriptorSet (with source info, for the doc comments). The
# Rust code is written from that set by prost-build and tonic-prost-build, run by the small
# generator crate clients/rust/codegen, whose Cargo.toml pins every crate that shapes the output.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=scripts/_proto_env.sh
source "${SCRIPT_DIR}/_proto_env.sh"

RUST_CRATE_DIR="${REPO_ROOT}/clients/rust"

parse_out_root "$@"

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo is not on PATH; the Rust client needs Rust $(sed -n 's/^rust-version = "\(.*\)"/\1/p' "${RUST_CRATE_DIR}/Cargo.toml") or newer." >&2
    exit 1
fi

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

# The hearts files and their imports. The generator writes code for hearts.v1 only: the google/api
# options need none, and the well-known types (google.protobuf.Timestamp, Duration) are
# prost_types'.
protoc --include_imports --include_source_info --descriptor_set_out="${WORK_DIR}/hearts.binpb" "${PROTO_FILES[@]}"

out="${WORK_DIR}/gen"
cargo run --quiet --manifest-path "${RUST_CRATE_DIR}/Cargo.toml" -p hearts-client-codegen -- \
    "${WORK_DIR}/hearts.binpb" "${out}"

# Replace the whole directory, so that the files of removed packages go away too.
dest="${OUT_ROOT}/clients/rust/src/gen"
rm -rf "${dest}"
mkdir -p "$(dirname "${dest}")"
cp -R "${out}" "${dest}"
echo "generated: clients/rust/src/gen (under ${OUT_ROOT})"
