#!/usr/bin/env bash
# CI for the C++ client: the Debian packages it needs are installed (when missing), the library,
# tests and README example build with -Wall -Wextra -Werror on the hand-written code (the code is
# generated from proto/ on the way), and the tests and the example pass against a live
# hearts-server (started by scripts/with-server.sh).
#
# Usage: bash clients/cpp/ci.sh   (from anywhere; needs uv on PATH, and apt-get as root or sudo
# where a package is missing). The build goes to clients/cpp/build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

log() { printf '\n== c++ client: %s\n' "$*"; }

packages=(g++ cmake ninja-build pkg-config libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev
    protobuf-compiler libgtest-dev)
if command -v dpkg-query >/dev/null 2>&1; then
    missing=()
    for package in "${packages[@]}"; do
        status="$(dpkg-query -W -f='${Status}' "${package}" 2>/dev/null || true)"
        [[ "${status}" == "install ok installed" ]] || missing+=("${package}")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        log "installing ${missing[*]}"
        as_root=()
        [[ "$(id -u)" -eq 0 ]] || as_root=(sudo)
        "${as_root[@]}" apt-get update -qq
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    fi
else
    echo "note: no dpkg here; the toolchain must be installed already (README.md, Requirements)"
fi
c++ --version | head -n 1
cmake --version | head -n 1
protoc --version

# The google/api and google/rpc .proto files come from googleapis-common-protos in the uv
# environment, as for scripts/_proto_env.sh; they are never copied into the repository.
googleapis="$(uv run --quiet --project ../.. python -c 'import os, google.api.annotations_pb2 as m
print(os.path.dirname(os.path.dirname(os.path.dirname(m.__file__))))')"

# Everything is compiled before the server starts, so that a slow build never races the server
# and a compile error is told apart from a test failure.
log "build (library, tests, README example)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTS_WARNINGS_AS_ERRORS=ON \
    -DHEARTS_GOOGLEAPIS_INCLUDE="${googleapis}"
cmake --build build

log "tests and the README example against a live server"
# Required: without HEARTS_SERVER the live tests fail instead of skipping. -j: the keepalive
# tests mostly wait (about 12 s and 32 s), beside the rest.
HEARTS_CONFORMANCE_REQUIRED=1 ../../scripts/with-server.sh bash -c '
    set -euo pipefail
    ctest --test-dir clients/cpp/build --output-on-failure --no-tests=error -j 4
    clients/cpp/build/readme_example "${HEARTS_SERVER}"'
