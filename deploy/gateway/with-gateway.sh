#!/usr/bin/env bash
# Runs a command against a fresh hearts-gateway in front of a fresh hearts-server, both on free
# loopback ports, then stops both (the gateway with SIGTERM, which must end it cleanly).
#
# Usage: deploy/gateway/with-gateway.sh CMD [ARGS...]
# The command sees HEARTS_SERVER=127.0.0.1:PORT (the server, from scripts/with-server.sh),
# HEARTS_GATEWAY=127.0.0.1:PORT (the gateway), and the two origins the gateway allows for CORS:
# HEARTS_GATEWAY_TEST_ORIGIN, only ever sent as a header, and HEARTS_GATEWAY_PAGE_ORIGIN,
# http://127.0.0.1:PORT on a free port that nothing listens on yet, for a test that serves a page
# there to a browser. The gateway's log goes to $HEARTS_GATEWAY_LOG (default: a temp file, shown
# if the command fails). The command runs in the repository root. Needs go and uv.
set -euo pipefail
GATEWAY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${GATEWAY_DIR}/../.." && pwd)"

if [[ -z "${HEARTS_SERVER:-}" ]]; then
    exec "${REPO_ROOT}/scripts/with-server.sh" "${GATEWAY_DIR}/with-gateway.sh" "$@"
fi

work="$(mktemp -d)"
log="${HEARTS_GATEWAY_LOG:-${work}/gateway.log}"
go build -C "${GATEWAY_DIR}" -o "${work}/hearts-gateway" .

# An origin under the reserved .test domain: only ever a header value, never a host reached.
export HEARTS_GATEWAY_TEST_ORIGIN="https://app.hearts.test"
# A real origin for a browser test's page (test/browser in clients/typescript): free now; the
# test listens on it itself, and fails at once should something else have taken it meanwhile.
page_port="$(uv run --quiet --project "${REPO_ROOT}" python -c \
    'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export HEARTS_GATEWAY_PAGE_ORIGIN="http://127.0.0.1:${page_port}"
"${work}/hearts-gateway" --listen 127.0.0.1:0 --backend "${HEARTS_SERVER}" \
    --cors-origins "${HEARTS_GATEWAY_TEST_ORIGIN},${HEARTS_GATEWAY_PAGE_ORIGIN}" \
    --grace-seconds 5 >"${log}" 2>&1 &
gateway_pid=$!
stop_gateway() {
    kill -TERM "${gateway_pid}" 2>/dev/null || true
    wait "${gateway_pid}" 2>/dev/null || true
    rm -rf "${work}"
}
trap stop_gateway EXIT

for _ in $(seq 1 100); do
    address="$(sed -n 's/^hearts-gateway listening on //p' "${log}" | head -n 1)"
    [[ -n "${address}" ]] && break
    if ! kill -0 "${gateway_pid}" 2>/dev/null; then
        echo "hearts-gateway exited early:" >&2; cat "${log}" >&2; exit 1
    fi
    sleep 0.1
done
if [[ -z "${address:-}" ]]; then
    echo "hearts-gateway did not start within 10 s:" >&2; cat "${log}" >&2; exit 1
fi

export HEARTS_GATEWAY="${address}"
status=0
"$@" || status=$?
if [[ ${status} -ne 0 ]]; then
    echo "--- hearts-gateway log (${log}) ---" >&2; tail -n 50 "${log}" >&2
    exit "${status}"
fi

# SIGTERM must stop the gateway cleanly (exit 0) well within its grace period.
kill -TERM "${gateway_pid}"
for _ in $(seq 1 100); do
    kill -0 "${gateway_pid}" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "${gateway_pid}" 2>/dev/null; then
    echo "hearts-gateway still running 10 s after SIGTERM:" >&2; tail -n 20 "${log}" >&2; exit 1
fi
gateway_status=0
wait "${gateway_pid}" || gateway_status=$?
if [[ ${gateway_status} -ne 0 ]]; then
    echo "hearts-gateway exited with ${gateway_status} after SIGTERM:" >&2; tail -n 20 "${log}" >&2
    exit 1
fi
echo "hearts-gateway stopped cleanly after SIGTERM"
