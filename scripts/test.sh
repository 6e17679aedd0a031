#!/usr/bin/env bash
# `make test`: configure, build and run the whole suite through ctest, then print how long
# the build took and how much test time each label used (ctest's label summary).
#   scripts/test.sh PRESET JOBS
set -euo pipefail
preset=${1:-default}
jobs=${2:-$(nproc)}
start=$(date +%s)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
built=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ctest --preset "$preset" -j "$jobs" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
done_at=$(date +%s)
echo "== make test: build $((built - start)) s, tests $((done_at - built)) s (wall, $jobs jobs), total $((done_at - start)) s"
sed -n '/^Label Time Summary:/,/^$/p' "$log" | sed 's/^/   /'
exit "$status"
