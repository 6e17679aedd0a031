#!/bin/sh
# A `lockstep device run --runner` for a site with IPU21 hardware: it loads the image with
# the IPU21 stack's `host-run` loader (IPU21-DEVICE.md section 13) and converts what that
# leaves into Lockstep's result folder (docs/device.md, "Runner contract: the result folder").
#
#   lockstep device run model.lkspkg --runner scripts/host-run-runner.sh -o dev
#
# It has NOT been run: there is no hardware where Lockstep is developed. Its assumptions,
# each to check at the site (docs/device.md "The host-run wrapper" repeats them):
#   1. `host-run` is on PATH (or HOST_RUN names it) and takes
#        host-run IMAGE --entry run --invocations N --output-dir OUT --profile OUT/profile.bin
#      and leaves OUT/BINDING.bin for every output binding of the image and a profile
#      captured by the stack (profile.capnp, section 15; Lockstep reads it as it is).
#      The flag spellings are our reading of the stack's tool, not something verified.
#   2. Lockstep's images have no host exchange calls (no host programs in the code), so the
#      loader must read the output bindings' tile regions back itself after the run (through
#      the tile debug window of section 13) rather than through a `run` host call.
#   3. The card's clock is LOCKSTEP_CLOCK_HZ (the package machine's clock) unless CLOCK_HZ
#      says otherwise.
# Anything missing or failing exits non-zero: `device run` then leaves no folder.
set -eu

image=${LOCKSTEP_IMAGE:?LOCKSTEP_IMAGE is not set (run me through lockstep device run)}
result=${LOCKSTEP_RESULT_DIR:?LOCKSTEP_RESULT_DIR is not set}
invocations=${LOCKSTEP_INVOCATIONS:-1}
clock=${CLOCK_HZ:-${LOCKSTEP_CLOCK_HZ:?LOCKSTEP_CLOCK_HZ is not set}}
host_run=${HOST_RUN:-host-run}
lockstep=${LOCKSTEP:-lockstep}

command -v "$host_run" >/dev/null 2>&1 || { echo "host-run-runner: $host_run not found" >&2; exit 3; }

raw="$result/.host-run"
mkdir -p "$raw" "$result/outputs"
"$host_run" "$image" --entry run --invocations "$invocations" --output-dir "$raw" --profile "$raw/profile.bin"

# The output bindings' names, in the image's order, from the package (one per line).
names=$("$lockstep" inspect "$LOCKSTEP_PACKAGE" --json |
        python3 -c 'import json,sys; [print(b["name"]) for b in json.load(sys.stdin)["bindings"] if b["kind"]=="output"]')

mv "$raw/profile.bin" "$result/profile.lsprof"
python3 - "$result" "$raw" "$clock" "$invocations" "$names" <<'PY'
import json, os, sys, urllib.parse
result, raw, clock, invocations, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def file_name(name):  # docs/device.md: bytes outside [A-Za-z0-9._-] (and a leading '.') as %XX
    out = "".join(c if (c.isascii() and (c.isalnum() or c in "._-")) else "".join("%%%02X" % b for b in c.encode()) for c in name)
    return ("%2E" + out[1:]) if out.startswith(".") else out
outputs = []
for name in [n for n in names.split("\n") if n]:
    data = open(os.path.join(raw, name + ".bin"), "rb").read()
    rel = "outputs/" + file_name(name) + ".bin"
    open(os.path.join(result, rel), "wb").write(data)
    outputs.append({"name": name, "file": rel, "bytes": len(data)})
doc = {"format": "lockstep-device-result", "version": 1, "runner": "ipu21-host-run", "status": "ok",
       "clock_hz": clock, "invocations": invocations, "outputs": sorted(outputs, key=lambda o: o["name"]),
       "profile": "profile.lsprof"}
open(os.path.join(result, "result.json"), "w").write(json.dumps(doc, indent=2) + "\n")
PY
rm -rf "$raw"
