#!/usr/bin/env bash
# Runs every benchmark executable of a build (`make bench` uses build/release) and prints
# the figures each one reports.
set -euo pipefail
build_dir=${1:-build/release}
shopt -s nullglob
benches=("$build_dir"/bench/bench_*)
if [[ ${#benches[@]} -eq 0 ]]; then
  echo "no benchmarks in $build_dir/bench (build first)" >&2
  exit 2
fi
for bench in "${benches[@]}"; do
  [[ -x $bench ]] || continue
  echo "== $(basename "$bench")"
  LOCKSTEP_BINARY="$build_dir/lockstep" "$bench"
done
