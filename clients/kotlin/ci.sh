#!/usr/bin/env bash
# CI for the Kotlin client: the committed generated code is what proto/ makes now, the README's
# example is the one the build compiles and runs, the project builds, and the live-server tests
# (conformance, keepalive, the resuming watch) pass against a live hearts-server (started by
# scripts/with-server.sh).
#
# Usage: bash clients/kotlin/ci.sh   (from anywhere; needs java 17+, mvn 3.8+ and uv on PATH)
# Maven uses its default local repository (~/.m2); a cold one is filled from Central on the way.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

log() { printf '\n== kotlin client: %s\n' "$*"; }

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

java -version 2>&1 | sed -n 1p
mvn -B -v 2>&1 | sed -n 1p

log "generated code is current"
bash ../../scripts/check-generated.sh kotlin \
    clients/kotlin/src/main/java/hearts/v1 clients/kotlin/src/main/kotlin/hearts/v1

log "the README example is src/test/kotlin/example/Example.kt"
# The example is the README's ```kotlin block that starts with `package example`.
awk '/^```kotlin$/ { inside = 1; first = 1; next }
     /^```$/ { inside = 0; keep = 0 }
     inside && first { keep = ($0 == "package example"); first = 0 }
     inside && keep' README.md >"${WORK_DIR}/Example.kt"
if ! diff -u src/test/kotlin/example/Example.kt "${WORK_DIR}/Example.kt"; then
    echo "README.md's example differs from src/test/kotlin/example/Example.kt; make them equal" >&2
    exit 1
fi
echo "README example: same"

# Dependencies are resolved and everything is compiled before the server starts, so that a slow
# download never races the server and a compile error is told apart from a test failure.
# Incremental compilation lets `mvn test` below reuse this build's Kotlin output instead of
# compiling the generated code a second time (some 30 s on a 2-core machine).
log "build"
mvn -B -q -Dkotlin.compiler.incremental=true test-compile

log "live-server tests: conformance, keepalive, resuming watch"
rm -rf target/surefire-reports
../../scripts/with-server.sh mvn -B -q -Dkotlin.compiler.incremental=true -f clients/kotlin/pom.xml test

# `mvn -q` hides Surefire's summary; count the reports, and refuse a run in which nothing ran.
read -r tests failed skipped < <(
    grep -h '<testsuite ' target/surefire-reports/TEST-*.xml | awk -F'"' '{
        for (i = 1; i < NF; i++) {
            if ($i ~ / tests=$/) t += $(i + 1)
            if ($i ~ / (failures|errors)=$/) f += $(i + 1)
            if ($i ~ / skipped=$/) s += $(i + 1)
        }
    } END { print t + 0, f + 0, s + 0 }'
)
printf "\nkotlin: %d passed, %d failed, %d skipped\n" "$((tests - failed - skipped))" "${failed}" "${skipped}"
if [[ "${tests}" -eq 0 || "${skipped}" -ne 0 ]]; then
    echo "the live-server tests ran ${tests} tests and skipped ${skipped}; all must run" >&2
    exit 1
fi
