#!/usr/bin/env bash
# Fails when a client's committed generated code is not what scripts/generate-LANG.sh makes from
# proto/ now. Each client's ci.sh calls it.
#
# Usage: bash scripts/check-generated.sh LANG DIR...
#   LANG  typescript, go, kotlin or rust (the generator scripts/generate-LANG.sh)
#   DIR   a generated directory, relative to the repository root, e.g. clients/go/hearts/v1
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 LANG DIR..." >&2
    exit 2
fi
lang="$1"
shift
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

bash "${REPO_ROOT}/scripts/generate-${lang}.sh" --out-root "${WORK_DIR}"
for dir in "$@"; do
    if ! diff -ru "${REPO_ROOT}/${dir}" "${WORK_DIR}/${dir}"; then
        echo "${dir} is stale: run 'uv run scripts/generate-${lang}.sh' and commit the result" >&2
        exit 1
    fi
    echo "${dir}: current"
done
