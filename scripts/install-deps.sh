#!/usr/bin/env bash
# Installs the Debian 12 packages Lockstep builds and tests with. Idempotent:
# does nothing (and needs no network) when every package is already present.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config clang clang-format libfuzzer-14-dev
  libsystemc-dev libboost-graph-dev libyaml-cpp-dev libspdlog-dev libgtest-dev
  capnproto libcapnp-dev libcli11-dev nlohmann-json3-dev libtbb-dev
  libcairo2-dev libopenmpi-dev openmpi-bin chromium libopenblas-dev libxxhash-dev libjemalloc-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
