#!/usr/bin/env bash
# Builds a libFuzzer target (preset `fuzz`: clang, -DLOCKSTEP_FUZZ=ON) and runs it for N
# seconds (default 60) over a scratch copy of its corpus, tests/fuzz/corpus/NAME for the
# target fuzz_NAME_reader, so the checked-in corpus only changes when someone copies a new
# finding into it on purpose.
#   scripts/fuzz.sh [TARGET] [SECONDS] [BUILD_DIR]
# TARGET is fuzz_NAME_reader or NAME (default: package); the targets are the fuzz_*.cpp in
# tests/fuzz. The old form `scripts/fuzz.sh SECONDS [BUILD_DIR]` runs the package reader.
# Findings go to BUILD_DIR/fuzz-findings/TARGET/.
set -euo pipefail
target="package"
if [[ $# -gt 0 && ! "$1" =~ ^[0-9]+$ ]]; then
  target="$1"
  shift
fi
seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-$root/build/fuzz}"
name="${target#fuzz_}"
name="${name%_reader}"
target="fuzz_${name}_reader"
corpus="$root/tests/fuzz/corpus/$name"
if [[ ! -f "$root/tests/fuzz/$target.cpp" || ! -d "$corpus" ]]; then
  echo "fuzz.sh: no target $target (tests/fuzz/$target.cpp and tests/fuzz/corpus/$name)" >&2
  exit 2
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLOCKSTEP_FUZZ=ON >/dev/null
cmake --build "$build" --target "$target" -j"${JOBS:-2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$corpus"/* "$work/"
findings="$build/fuzz-findings/$target"
mkdir -p "$findings"
fuzzer="$(find "$build" -name "$target" -type f -perm -u+x | head -n 1)"
"$fuzzer" "$work" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -timeout=25 -artifact_prefix="$findings/" -print_final_stats=1
