#!/usr/bin/env bash
# Regenerates the Kotlin/JVM client's code from proto/: the protobuf-java messages and grpc-java
# stubs (clients/kotlin/src/main/java/hearts/v1) and the protobuf-kotlin DSL builders and
# grpc-kotlin coroutine stubs (clients/kotlin/src/main/kotlin/hearts/v1). Idempotent: run it after
# any change to proto/ and commit the result; clients/kotlin/ci.sh fails when the two disagree.
#
# Usage: uv run scripts/generate-kotlin.sh [--out-root DIR]
#   --out-root DIR  write the tree under DIR instead of the repository (for the staleness check);
#                   files land at the same relative paths, DIR/clients/kotlin/src/main/{java,kotlin}.
#
# protoc and its plugins are the versions pinned in clients/kotlin/pom.xml, fetched by Maven into a
# temporary directory (`mvn dependency:copy@protoc`), so nothing on PATH can stand in for them:
# - protoc itself (com.google.protobuf:protoc), because the protoc of grpcio-tools has only the
#   Python generators built in. It must be the same protobuf release as grpcio-tools' protoc; the
#   script checks that, so the Python and JVM code always come from one protoc release.
# - protoc-gen-grpc-java (a native executable) and protoc-gen-grpc-kotlin (a jar, run through a
#   `java -jar` wrapper).
# The include paths are those of scripts/generate.sh (scripts/_proto_env.sh): google/api from the
# installed googleapis-common-protos, the well-known types from grpcio-tools. Only hearts/v1 is
# generated: the google/api and google/rpc classes come from proto-google-common-protos. The
# .proto files have no java_package option, so the Java and Kotlin package is `hearts.v1`.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=scripts/_proto_env.sh
source "${SCRIPT_DIR}/_proto_env.sh"

CLIENT_DIR="${REPO_ROOT}/clients/kotlin"

parse_out_root "$@"

for tool in java mvn; do
    if ! command -v "${tool}" >/dev/null 2>&1; then
        echo "error: ${tool} is not on PATH; the Kotlin client needs Java 17+ and Maven 3.8+." >&2
        exit 1
    fi
done

# The platform name protoc-gen-grpc-java is published under (os-maven-plugin's naming).
case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=osx ;;
    MINGW* | MSYS* | CYGWIN*) os=windows ;;
    *) echo "error: no protoc-gen-grpc-java build for $(uname -s)" >&2; exit 1 ;;
esac
case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch_64 ;;
    *) echo "error: no protoc-gen-grpc-java build for $(uname -m)" >&2; exit 1 ;;
esac

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "${WORK_DIR}"' EXIT

tools="${WORK_DIR}/tools"
mvn -q -B -f "${CLIENT_DIR}/pom.xml" dependency:copy@protoc \
    -Dprotoc.dir="${tools}" -Dprotoc.classifier="${os}-${arch}"
chmod +x "${tools}/protoc.exe" "${tools}/protoc-gen-grpc-java.exe"
# protoc runs a plugin as an executable, so the grpc-kotlin jar gets a wrapper.
printf '#!/bin/sh\nexec java -jar "%s" "$@"\n' "${tools}/protoc-gen-grpc-kotlin.jar" >"${tools}/protoc-gen-grpckt"
chmod +x "${tools}/protoc-gen-grpckt"

python_protoc_version="$(protoc --version)"
jvm_protoc_version="$("${tools}/protoc.exe" --version)"
if [[ "${python_protoc_version}" != "${jvm_protoc_version}" ]]; then
    echo "error: grpcio-tools has ${python_protoc_version} but clients/kotlin/pom.xml pins" >&2
    echo "       ${jvm_protoc_version} (protobuf.version); keep the two on one protobuf release." >&2
    exit 1
fi

out="${WORK_DIR}/out"
mkdir -p "${out}/java" "${out}/kotlin"
"${tools}/protoc.exe" \
    --proto_path="${PROTO_DIR}" \
    --proto_path="${GOOGLEAPIS_INCLUDE}" \
    --proto_path="${WKT_INCLUDE}" \
    --plugin=protoc-gen-grpc-java="${tools}/protoc-gen-grpc-java.exe" \
    --plugin=protoc-gen-grpckt="${tools}/protoc-gen-grpckt" \
    --java_out="${out}/java" \
    --grpc-java_out="${out}/java" \
    --kotlin_out="${out}/kotlin" \
    --grpckt_out="${out}/kotlin" \
    "${PROTO_FILES[@]}"

# Replace each generated package directory whole, so that the files of removed .proto files go
# away too; anything else under src/main is left alone.
for lang in java kotlin; do
    dest="${OUT_ROOT}/clients/kotlin/src/main/${lang}/hearts/v1"
    rm -rf "${dest}"
    mkdir -p "$(dirname "${dest}")"
    cp -R "${out}/${lang}/hearts/v1" "${dest}"
done
echo "generated: clients/kotlin/src/main/java/hearts/v1 and src/main/kotlin/hearts/v1 (under ${OUT_ROOT})"
