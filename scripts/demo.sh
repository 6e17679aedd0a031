#!/usr/bin/env bash
# The main job (`make demo`): lower the embedded default workload to a capture, sweep every
# phase under every frontier configuration (and its paired width) with every payload
# checked, and print a short summary; then build the whole small model (seeded weights and
# input) and run it, three invocations, with a cycle profile whose HTML timeline the report
# links to. Everything goes to ./out/demo.
set -euo pipefail
build_dir=${1:-build/default}
lockstep="$build_dir/lockstep"
workload=${LOCKSTEP_DEMO_WORKLOAD:-configs/workloads/vit-tiny.yaml}
out=out/demo
mkdir -p "$out"

echo "== lowering $workload"
"$lockstep" lower "$workload" -o "$out/capture.capnp"
"$lockstep" capture stats "$out/capture.capnp" | sed 's/^/   /'

echo "== sweeping (configs/sweeps/frontier.yaml, every phase x 19 configurations)"
start=$(date +%s)
status=0
"$lockstep" sweep "$out/capture.capnp" -o "$out/sweep" || status=$?
seconds=$(( $(date +%s) - start ))
if [[ $status -ne 0 && $status -ne 1 ]]; then
  echo "sweep failed (exit $status)" >&2
  exit "$status"
fi

results="$out/sweep/results.csv"
phases=$(tail -n +2 "$results" | cut -d, -f1 | sort -u | wc -l)
points=$(tail -n +2 "$results" | wc -l)
failed=$(tail -n +2 "$results" | awk -F, '$16 != "pass"' | wc -l)
echo
echo "== summary"
echo "phases     $phases"
echo "points     $points in ${seconds} s ($(( points - failed )) payloads verified, $failed failed)"
echo "best weighted saving against the reference, per window:"
awk -F, 'NR > 1 { printf "   %-14s %12s cycles  %6s%% of its exchange cycles  %s ms\n", $7, $5, $8, $6 }' "$out/sweep/comparisons.csv"
echo "report     $out/sweep/index.html (provenance: $out/sweep/provenance.json)"
if [[ $failed -ne 0 ]]; then
  echo "FAIL: $failed point(s) failed their payload check" >&2
  exit 1
fi

echo
echo "== applying the report: one package with each phase's row+64 selection, run on the simulator"
"$lockstep" compile "$out/capture.capnp" --selection "$out/sweep" --window row+64 -o "$out/selected.pkg" \
  | sed -n '/^selection:/,$p' | sed 's/^/   /'

echo
echo "== the whole model: lockstep build $workload, then three invocations"
"$lockstep" build "$workload" -o "$out/model.lkspkg"
"$lockstep" run "$out/model.lkspkg" --invocations 3 --reference --output "$out/output.npy" \
  --profile "$out/sweep/profile.lsprof" > "$out/run.txt"
grep -v '^[0-9]' "$out/run.txt" | sed 's/^/   /'
echo "output     $out/output.npy"

echo
echo "== where the model's cycles go: its profile, next to the sweep report"
"$lockstep" profile summary "$out/sweep/profile.lsprof" | sed -n '1,9p' | sed 's/^/   /'
"$lockstep" profile render "$out/sweep/profile.lsprof" -o "$out/sweep/profile.html"
# The report again, now with the whole program's cycles (one invocation) and a link to the timeline.
program_cycles=$(awk '/^invocation 0:/ { print $3 }' "$out/run.txt")
"$lockstep" report "$out/sweep" --program-cycles "$program_cycles"
echo "profile    $out/sweep/profile.lsprof (timeline $out/sweep/profile.html, linked from the report)"
