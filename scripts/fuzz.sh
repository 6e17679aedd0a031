#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, -DLOCKSTEP_FUZZ=ON) and runs the package
# reader fuzzer for N seconds (default 60) over a scratch copy of its corpus, so the checked-in
# corpus only changes when someone copies a new finding into it on purpose.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-$root/build/fuzz}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLOCKSTEP_FUZZ=ON >/dev/null
cmake --build "$build" --target fuzz_package_reader -j"${JOBS:-2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root"/tests/fuzz/corpus/package/* "$work/"
mkdir -p "$build/fuzz-findings"
fuzzer="$(find "$build" -name fuzz_package_reader -type f -perm -u+x | head -n 1)"
"$fuzzer" "$work" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -artifact_prefix="$build/fuzz-findings/" -print_final_stats=1
