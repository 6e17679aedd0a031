#!/bin/sh
# A `lockstep device run --runner` for a site with IPU21 hardware: it runs the image with the
# IPU21 stack's own command line (IPU21-DEVICE.md section 17, nothing else) and converts what
# that leaves into Lockstep's result folder (docs/device.md, "Runner contract").
#
#   IPU_BOOTLOADER=.../tile_bootloader_cc_ipu21.elf IPU_CONFIGURATION=card.ipucfg \
#     lockstep device run model.lkspkg --runner scripts/host-run-runner.sh -o dev
#
# What it calls, exactly as section 17 gives it:
#   ipu-stack host-run IMAGE BOOTLOADER CONFIGURATION CALL... [--input CALL=FILE]...
#       --output run=RAW [--device PATH]
#   ipu-stack profile-extract IMAGE RAW -o PROFILE --clock-hz HZ
# The calls are the image's, in its order (`initialize`, then `run`, for what `device export`
# writes); a call with input bytes takes LOCKSTEP_HOST_INPUTS/CALL.bin (the files `device run`
# makes from the package), a call with output bytes gets --output. RAW, run's output, is then
# split into the output bindings by the call's file layout (17.1: bindings in `outputs` order,
# each at the running total of the earlier ones' sizes).
#
# Environment: IPU_BOOTLOADER and IPU_CONFIGURATION (required: host-run has no defaults for
# them), IPU_STACK (the stack's executable, default `ipu-stack`), IPU_DEVICE (passed as
# --device), CLOCK_HZ (default LOCKSTEP_CLOCK_HZ), LOCKSTEP (default `lockstep`).
#
# It has NOT been run on hardware (there is none where Lockstep is developed); the suite runs
# it against a stand-in that accepts only section 17's arguments and runs `lockstep device
# simulate` underneath. Before anything reaches the device it asks `lockstep device inspect`
# what the stack's tools would refuse and stops with that message.
# Anything missing or failing exits non-zero: `device run` then leaves no folder.
set -eu

image=${LOCKSTEP_IMAGE:?LOCKSTEP_IMAGE is not set (run me through lockstep device run)}
result=${LOCKSTEP_RESULT_DIR:?LOCKSTEP_RESULT_DIR is not set}
clock=${CLOCK_HZ:-${LOCKSTEP_CLOCK_HZ:?LOCKSTEP_CLOCK_HZ is not set}}
bootloader=${IPU_BOOTLOADER:?IPU_BOOTLOADER is not set: the SDK secondary tile bootloader ELF host-run loads first}
configuration=${IPU_CONFIGURATION:?IPU_CONFIGURATION is not set: the card register capture (IPUCFG1) host-run replays}
stack=${IPU_STACK:-ipu-stack}
lockstep=${LOCKSTEP:-lockstep}

command -v "$stack" >/dev/null 2>&1 || { echo "host-run-runner: $stack not found (set IPU_STACK)" >&2; exit 3; }

info=$("$lockstep" device inspect "$image" --json)
printf '%s' "$info" | python3 -c '
import json, sys
info = json.load(sys.stdin)
if info["stack_tool_problems"]:
    sys.exit("host-run-runner: the stack cannot run this image: " + "; ".join(info["stack_tool_problems"]))
calls = [c["name"] for c in info["host_calls"]]
if "run" not in calls:
    sys.exit("host-run-runner: the image has no host call \"run\" (it has: " + ", ".join(calls) + ")")
'

raw="$result/.host-run"
mkdir -p "$raw" "$result/outputs"
inputs=${LOCKSTEP_HOST_INPUTS:-}
# One line per call: NAME INPUT_BYTES OUTPUT_BYTES (names are the image's; `device export`
# writes `initialize` and `run`).
printf '%s' "$info" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["host_calls"]:
    print(c["name"], c["input_bytes"], c["output_bytes"])
' > "$raw/calls"
set -- "$stack" host-run "$image" "$bootloader" "$configuration"
while read -r name in_bytes out_bytes; do set -- "$@" "$name"; done < "$raw/calls"
while read -r name in_bytes out_bytes; do
  if [ "$in_bytes" -gt 0 ]; then
    [ -n "$inputs" ] && [ -f "$inputs/$name.bin" ] || { echo "host-run-runner: call $name takes $in_bytes input bytes and LOCKSTEP_HOST_INPUTS has no $name.bin" >&2; exit 4; }
    set -- "$@" --input "$name=$inputs/$name.bin"
  fi
  if [ "$out_bytes" -gt 0 ]; then set -- "$@" --output "$name=$raw/$name.bin"; fi
done < "$raw/calls"
if [ -n "${IPU_DEVICE:-}" ]; then set -- "$@" --device "$IPU_DEVICE"; fi
"$@" >&2
"$stack" profile-extract "$image" "$raw/run.bin" -o "$result/profile.lsprof" --clock-hz "$clock" >&2

printf '%s' "$info" > "$raw/inspect.json"
python3 - "$result" "$raw/run.bin" "$clock" "$raw/inspect.json" <<'PY'
import json, os, sys
result, raw, clock = sys.argv[1], sys.argv[2], int(sys.argv[3])
info = json.load(open(sys.argv[4]))
data = open(raw, "rb").read()
def file_name(name):  # docs/device.md: bytes outside [A-Za-z0-9._-] (and a leading '.') as %XX
    out = "".join(c if (c.isascii() and (c.isalnum() or c in "._-")) else "".join("%%%02X" % b for b in c.encode()) for c in name)
    return ("%2E" + out[1:]) if out.startswith(".") else out
outputs, offset = [], 0
for b in [b for b in info["bindings"] if b["kind"] == "output"]:
    start, offset = offset, offset + b["bytes"]
    if b["name"] == "completion":
        continue  # listed in outputs but never moved by the run call (12.4, 17.3)
    if offset > len(data):
        sys.exit("host-run-runner: run output is %d bytes, too short for binding %s at %d+%d" % (len(data), b["name"], start, b["bytes"]))
    rel = "outputs/" + file_name(b["name"]) + ".bin"
    open(os.path.join(result, rel), "wb").write(data[start:offset])
    outputs.append({"name": b["name"], "file": rel, "bytes": b["bytes"]})
doc = {"format": "lockstep-device-result", "version": 1, "runner": "ipu21-host-run", "status": "ok",
       "clock_hz": clock, "outputs": outputs, "profile": "profile.lsprof"}
open(os.path.join(result, "result.json"), "w").write(json.dumps(doc, indent=2) + "\n")
PY
rm -rf "$raw"
