#!/usr/bin/env bash
# CI for the Rust client: the committed generated code is what proto/ makes now, the code is
# formatted and passes clippy, the README's examples compile, and the tests pass: the unit tests,
# the retry tests against a scripted server, and the conformance, watch, live retry and keepalive
# tests against a live hearts-server (started by scripts/with-server.sh).
#
# Usage: bash clients/rust/ci.sh   (from anywhere; needs cargo (rustup) and uv on PATH)
# Cargo resolves the dependencies afresh (no Cargo.lock is committed) and fills its cache from the
# crates registry on the way; the build goes to clients/rust/target.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

log() { printf '\n== rust client: %s\n' "$*"; }

cargo --version
rustc --version

# rustfmt and clippy are rustup components. A toolchain without one gets it from rustup if that
# works here; otherwise its check is skipped, with a note, rather than failing the build.
have_component() {
    local component="$1" command="$2"
    if cargo "${command}" --version >/dev/null 2>&1; then
        return 0
    fi
    if command -v rustup >/dev/null 2>&1 \
        && timeout 120 rustup component add "${component}" >/dev/null 2>&1 \
        && cargo "${command}" --version >/dev/null 2>&1; then
        return 0
    fi
    echo "note: ${component} is not installed and rustup could not add it; its check is skipped"
    return 1
}

log "generated code is current"
bash ../../scripts/check-generated.sh rust clients/rust/src/gen

log "rustfmt"
if have_component rustfmt fmt; then
    cargo fmt --all --check
    echo "formatted"
fi

log "clippy"
if have_component clippy clippy; then
    cargo clippy --workspace --all-targets -- -D warnings
fi

# Everything is compiled before the server starts, so that a slow build never races the server
# and a compile error is told apart from a test failure.
log "build"
cargo test --all-targets --no-run

log "the README examples compile (doc tests)"
cargo test --doc

log "tests, the conformance, watch, live retry and keepalive ones against a live server"
# Required: without HEARTS_SERVER the test fails instead of skipping.
HEARTS_CONFORMANCE_REQUIRED=1 ../../scripts/with-server.sh \
    cargo test --manifest-path clients/rust/Cargo.toml --all-targets -- --nocapture
