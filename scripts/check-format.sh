#!/usr/bin/env bash
# Checks that every C++ source of the tree is as clang-format (the root's .clang-format) writes
# it; prints the files that differ and exits 1. Fix them with: scripts/check-format.sh --fix
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
clang_format="${CLANG_FORMAT:-clang-format}"
command -v "$clang_format" >/dev/null || { echo "check-format: $clang_format not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
mapfile -d '' files < <(find . \( -path ./build -o -path './build-*' -o -path ./.git -o -path ./shared \) -prune -o \
  -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)
if [ "${1:-}" = "--fix" ]; then
  printf '%s\0' "${files[@]}" | xargs -0 "$clang_format" -i
  exit 0
fi
# One clang-format for all the files (a process a file took a minute); its complaints name each file.
out="$(printf '%s\0' "${files[@]}" | xargs -0 "$clang_format" --dry-run --Werror 2>&1 >/dev/null || true)"
mapfile -t bad < <(printf '%s\n' "$out" | sed -n 's/^\(\.\/[^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [ -n "$out" ] && [ ${#bad[@]} -eq 0 ]; then
  echo "check-format: $clang_format failed: $(printf '%s\n' "$out" | head -1)" >&2
  exit 2
fi
if [ ${#bad[@]} -ne 0 ]; then
  printf 'check-format: %s is not as clang-format writes it\n' "${bad[@]}" >&2
  echo "check-format: ${#bad[@]} of ${#files[@]} files differ; scripts/check-format.sh --fix rewrites them" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files as clang-format writes them"
