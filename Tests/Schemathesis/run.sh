#!/usr/bin/env bash
# schemathesis (PyPI) against a running dashboard: every check, bounded examples, a fixed seed.
#   Tests/Schemathesis/run.sh DASHBOARD_BINARY [EXAMPLES]
# Starts the dashboard on a free port with the built-in simulator, opens an out-of-space error so
# the attempts route has something to work on, then runs schemathesis with the access token and
# the CSRF header. Exits with schemathesis's status. The settings are in schemathesis.toml here.
set -euo pipefail
binary=$1
examples=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

"$binary" --port 0 --db :memory: --always-on --log-level warning > "$work/stdout" 2> "$work/stderr" &
pid=$!
for _ in $(seq 100); do [ "$(wc -l < "$work/stdout")" -ge 2 ] && break; sleep 0.05; done
simulator=$(sed -n 1p "$work/stdout" | awk '{print $NF}')
address=$(sed -n 2p "$work/stdout" | awk '{print $NF}')
base=${address%%/\?token=*}
token=${address##*token=}
csrf=$(curl -sf -H "Authorization: Bearer $token" "$base/api/session" | python3 -c 'import json,sys; print(json.load(sys.stdin)["csrfToken"])')

# An open error: the quota is set just above what is used and more messages arrive than fit.
curl -sf -X POST -d '{"account":"primary","count":5}' "${simulator}sim/messages" > /dev/null
curl -sf -X POST -d '{"bytes":600}' "${simulator}sim/quota" > /dev/null
for _ in $(seq 100); do
    curl -sf -H "Authorization: Bearer $token" "$base/api/state" | grep -q '"quotaBytes":600' && break
    sleep 0.05
done
curl -sf -X POST -d '{"account":"primary","count":40}' "${simulator}sim/messages" > /dev/null

cd "$work"
# One worker: with two, hypothesis parses lambda sources on two threads at once, and CPython 3.11's
# ast module then fails with "AST constructor recursion depth mismatch" (python/cpython#106905),
# reported by schemathesis as its own runtime error rather than anything the dashboard did.
schemathesis --config-file "$here/schemathesis.toml" run "$base/openapi.json" \
    -H "Authorization: Bearer $token" -H "X-CSRF-Token: $csrf" \
    --checks all --max-examples "$examples" --seed 20261130 --workers 1 --no-color
