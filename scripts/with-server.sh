#!/usr/bin/env bash
# Runs a command against a fresh hearts-server on a free loopback port, then stops the server.
#
# Usage: scripts/with-server.sh CMD [ARGS...]
# The command sees HEARTS_SERVER=127.0.0.1:PORT, and HEARTS_IDENTITY_SECRET, the secret the server
# checks identity tokens with (HS256 JWTs a test signs as an app's backend would). The server
# uses the embedded in-memory store unless HEARTS_REDIS_URL is set. Its log goes to $HEARTS_SERVER_LOG (default: a temp file, shown
# if the command fails).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log="${HEARTS_SERVER_LOG:-$(mktemp)}"
export HEARTS_IDENTITY_SECRET="${HEARTS_IDENTITY_SECRET:-conformance-identity-secret-0123456789abcdef}"
uv run --quiet hearts-server --host 127.0.0.1 --port 0 --metrics-port 0 --bot-workers 0 \
    --token-secret "${HEARTS_TOKEN_SECRET:-conformance-secret-0123456789abcdef}" >"${log}" 2>&1 &
server_pid=$!
trap 'kill -TERM "${server_pid}" 2>/dev/null || true; wait "${server_pid}" 2>/dev/null || true' EXIT

for _ in $(seq 1 200); do
    address="$(sed -n 's/^hearts-server listening on //p' "${log}" | head -n 1)"
    [[ -n "${address}" ]] && break
    if ! kill -0 "${server_pid}" 2>/dev/null; then
        echo "hearts-server exited early:" >&2; cat "${log}" >&2; exit 1
    fi
    sleep 0.1
done
if [[ -z "${address:-}" ]]; then
    echo "hearts-server did not start within 20 s:" >&2; cat "${log}" >&2; exit 1
fi

export HEARTS_SERVER="${address}"
status=0
"$@" || status=$?
if [[ ${status} -ne 0 ]]; then
    echo "--- hearts-server log (${log}) ---" >&2; tail -n 50 "${log}" >&2
fi
exit "${status}"
