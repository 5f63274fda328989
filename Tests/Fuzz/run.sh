#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (swiftc -sanitize=fuzzer,address).
#   Tests/Fuzz/run.sh [SECONDS] [request|response|json]     default 600 s (ten minutes) of the request decoder
# request:  the HTTP request decoder, seeds in Tests/Fuzz/corpus (good and malformed requests).
# response: the HTTP response decoder the client reads other servers' answers with, seeds in
#           Tests/Fuzz/response-corpus.
# json:     JSONText's reader, seeds in Tests/Fuzz/json-corpus.
# Findings land in /tmp/fuzz-findings.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN="${1:-600}"
TARGET="${2:-request}"
BUILD=/tmp/fuzz-build
export SWIFT_BACKTRACE=enable=no   # let ASan and libFuzzer report a crash, not Swift's backtracer
mkdir -p "$BUILD" /tmp/fuzz-findings
quiet() { grep -v "Cannot export local symbol" >&2; }
case "$TARGET" in
request)
    mkdir -p /tmp/fuzz-corpus
    cp -n Tests/Fuzz/corpus/* /tmp/fuzz-corpus/ 2>/dev/null || true
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name HTTPCoreFuzz \
        Sources/HTTPCore/Parsing/HTTPRequestDecoder.swift Sources/HTTPCore/Parsing/HTTPParseError.swift Sources/HTTPCore/Parsing/HTTPSyntax.swift \
        Sources/HTTPCore/Parsing/PercentDecoding.swift Sources/HTTPCore/Messages/HTTPRequest.swift \
        Sources/HTTPCore/Messages/HTTPHeaders.swift Sources/HTTPCore/Messages/HTTPStatus.swift \
        Tests/Fuzz/RequestDecoderFuzzer.swift -o "$BUILD/request-decoder-fuzzer" 2> >(quiet)
    "$BUILD/request-decoder-fuzzer" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
        -artifact_prefix=/tmp/fuzz-findings/ /tmp/fuzz-corpus
    ;;
response)
    mkdir -p /tmp/fuzz-response-corpus
    cp -n Tests/Fuzz/response-corpus/* /tmp/fuzz-response-corpus/ 2>/dev/null || true
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name HTTPCoreResponseFuzz \
        Sources/HTTPCore/Parsing/HTTPResponseDecoder.swift Sources/HTTPCore/Parsing/HTTPSyntax.swift Sources/HTTPCore/Messages/HTTPHeaders.swift \
        Tests/Fuzz/ResponseDecoderFuzzer.swift -o "$BUILD/response-decoder-fuzzer" 2> >(quiet)
    "$BUILD/response-decoder-fuzzer" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
        -artifact_prefix=/tmp/fuzz-findings/ /tmp/fuzz-response-corpus
    ;;
json)
    mkdir -p /tmp/fuzz-json-corpus
    cp -n Tests/Fuzz/json-corpus/* /tmp/fuzz-json-corpus/ 2>/dev/null || true
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name JSONTextFuzz \
        Sources/JSONText/JSONReader.swift Tests/Fuzz/JSONReaderFuzzer.swift -o "$BUILD/json-reader-fuzzer" 2> >(quiet)
    "$BUILD/json-reader-fuzzer" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
        -artifact_prefix=/tmp/fuzz-findings/ /tmp/fuzz-json-corpus
    ;;
*)
    echo "run.sh: unknown target '$TARGET' (request, response or json)" >&2
    exit 2
    ;;
esac
