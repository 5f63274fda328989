#!/usr/bin/env bash
# Coverage-guided fuzzing of the HTTP request decoder with libFuzzer (swiftc -sanitize=fuzzer).
#   Tests/Fuzz/run.sh [SECONDS]     default 600 (ten minutes)
# Seeds: Tests/Fuzz/corpus (good and malformed requests). Findings land in /tmp/fuzz-findings.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN="${1:-600}"
BUILD=/tmp/fuzz-build
mkdir -p "$BUILD" /tmp/fuzz-corpus /tmp/fuzz-findings
cp -n Tests/Fuzz/corpus/* /tmp/fuzz-corpus/ 2>/dev/null || true
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name HTTPCoreFuzz \
    Sources/HTTPCore/Parsing/HTTPRequestDecoder.swift Sources/HTTPCore/Parsing/HTTPParseError.swift \
    Sources/HTTPCore/Parsing/PercentDecoding.swift Sources/HTTPCore/Messages/*.swift \
    Sources/HTTPCore/Server/HeldResponse.swift Sources/HTTPCore/Server/ResponseEncoder.swift \
    Tests/Fuzz/RequestDecoderFuzzer.swift -o "$BUILD/request-decoder-fuzzer" 2> >(grep -v "Cannot export local symbol" >&2)
"$BUILD/request-decoder-fuzzer" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix=/tmp/fuzz-findings/ /tmp/fuzz-corpus
