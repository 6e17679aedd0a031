#!/usr/bin/env bash
# The main job on the embedded default workload (see README).
set -euo pipefail
build_dir=${1:-build/default}
"$build_dir/lockstep" configs
